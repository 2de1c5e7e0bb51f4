(function(){
'use strict';
// snapaudit review: every string from the server is put into textContent (inside <bdi>);
// this script never parses HTML.
function meta(name){
  var m=document.querySelector('meta[name="'+name+'"]');
  return m?m.getAttribute('content'):'';
}
var TOKEN=meta('review-token'), MODE=meta('review-mode');
var LABEL_KEYS={s:'same',d:'different',u:'unsure'};
var DECISION_KEYS={r:'regression',i:'improvement',n:'neutral',c:'unclear'};
var DECISION_NAMES={regression:'regression',improvement:'improvement',neutral:'neutral',
  unclear:"can't tell"};
var S={items:[],cur:0,pair:0,drafts:{},groups:{},pending:{},progress:null,filter:'',
  decision:{},armed:false,listKey:null,before:-1,polling:false};
var listEl=document.getElementById('list'), itemEl=document.getElementById('item');
var statusEl=document.getElementById('status'), search=document.getElementById('search');
var helpEl=document.getElementById('help'), resultsEl=document.getElementById('results');
var LOCK_TEXT='Done: lock my labels (L)';

function el(tag,cls,text){
  var e=document.createElement(tag);
  if(cls){e.className=cls;}
  if(text!==undefined&&text!==null){
    var b=document.createElement('bdi'); b.textContent=String(text); e.appendChild(b);
  }
  return e;
}
function say(text,bad){
  statusEl.textContent=text; statusEl.className=bad?'err':'';
}
function api(method,path,body){
  var opts={method:method,cache:'no-store',credentials:'same-origin',
    headers:{'X-Review-Token':TOKEN,'Content-Type':'application/json'}};
  if(body!==undefined){opts.body=JSON.stringify(body);}
  return fetch(path,opts).then(function(r){
    return r.json().then(function(j){
      if(!r.ok){var e=new Error(j.error||('HTTP '+r.status)); e.status=r.status; throw e;}
      return j;
    });
  });
}

// ---- which items are shown (search) and which one is current
function matches(it){
  if(!S.filter){return true;}
  var parts=[it.question_id,it.question];
  (it.answers||[]).forEach(function(a){parts.push(a.text);});
  (it.old||[]).concat(it.new||[]).forEach(function(a){parts.push(a.text);});
  return parts.join('\n').toLowerCase().indexOf(S.filter)>=0;
}
function visible(){
  var out=[];
  S.items.forEach(function(it,i){if(matches(it)){out.push(i);}});
  return out;
}
function done(it){return MODE==='label'?!!it.saved:!!it.decision;}
function select(i,pair){
  if(i<0||i>=S.items.length){return;}
  S.cur=i; S.pair=pair||0; S.armed=false;
  var id=S.items[i].question_id;
  if(decodeURIComponent(location.hash.replace(/^#q=/,''))!==id){
    history.replaceState(null,'','#q='+encodeURIComponent(id));
  }
  render();
}
function step(delta){
  var vis=visible(); if(!vis.length){return;}
  var at=vis.indexOf(S.cur);
  if(MODE==='label'&&at>=0){
    var n=S.items[S.cur].pairs.length, p=S.pair+delta;
    if(p>=0&&p<n){S.pair=p; render(); return;}
  }
  var next=at<0?vis[0]:vis[Math.max(0,Math.min(vis.length-1,at+delta))];
  if(next===S.cur){return;}
  select(next,(MODE==='label'&&delta<0)?S.items[next].pairs.length-1:0);
}

// ---- rendering
function renderProgress(){
  var p=S.progress, box=document.getElementById('progress'); if(!p){return;}
  box.textContent=MODE==='label'
    ?(p.labelled+' / '+p.label_total+' labelled'+(p.labels_locked?' (locked)':''))
    :(p.reviewed+' / '+p.changed+' reviewed');
  var b=document.getElementById('finish');
  if(b&&p.labels_locked){b.disabled=true; b.textContent='labels locked';}
  else if(b&&!S.armed){b.disabled=false; b.textContent=LOCK_TEXT;}
  renderResults(p.results);
}
// ---- results.json and the report, brought up to date by the server after a lock or a
// decision: what it last did, polled while it works
function renderResults(r){
  if(!resultsEl||!r){return;}
  var text='', bad=false;
  if(r.state==='updating'){text='updating results.json and the report\u2026';}
  else if(r.state==='failed'){text='results.json not updated: '+r.error; bad=true;}
  else if(r.updated_at){text='results.json and the report updated ('+r.updated_at+')';}
  resultsEl.textContent=text; resultsEl.className=bad?'err':'';
  resultsEl.setAttribute('data-state',r.state);
  if(r.state==='updating'&&!S.polling){
    S.polling=true;
    setTimeout(function(){
      api('GET','/api/progress').then(function(p){S.polling=false; S.progress=p; renderProgress();},
        function(){S.polling=false;});
    },700);
  }
}
function renderList(){
  // rebuilt only when the search or the items change; a move only updates two classes
  var key=S.filter+'\n'+S.items.length;
  if(key!==S.listKey){
    S.listKey=key; listEl.textContent='';
    visible().forEach(function(i){
      var it=S.items[i], b=el('button','',it.question_id);
      b.type='button'; b.setAttribute('data-i',String(i));
      b.setAttribute('data-qid',it.question_id);
      b.addEventListener('click',function(){select(i,0);});
      listEl.appendChild(b);
    });
  }
  Array.prototype.forEach.call(listEl.children,function(b){
    var i=Number(b.getAttribute('data-i')), cls=(i===S.cur?'cur ':'')+(done(S.items[i])?'done':'');
    if(b.className!==cls){b.className=cls; if(i===S.cur){b.scrollIntoView({block:'nearest'});}}
  });
}
function labelsOf(it){return it.saved||S.drafts[it.question_id]||{};}
function renderLabel(it){
  var labels=labelsOf(it), groups=S.groups[it.question_id]||{};
  var answers=el('div','answers');
  it.answers.forEach(function(a){
    var box=el('div','answer'); box.setAttribute('data-item',a.item);
    box.appendChild(el('span','name',a.item+(groups[a.item]?' ['+groups[a.item]+']':'')));
    box.appendChild(el('span','text',a.text));
    answers.appendChild(box);
  });
  itemEl.appendChild(answers);
  var table=el('table','pairs'), body=el('tbody');
  it.pairs.forEach(function(pair,p){
    var row=el('tr',p===S.pair?'cur':''); row.setAttribute('data-pair',pair);
    if(labels[pair]){row.setAttribute('data-label',labels[pair]);}
    row.appendChild(el('td','p',pair.replace('|',' \u2194 ')));
    row.appendChild(el('td','l',labels[pair]||'-'));
    var cell=el('td');
    ['same','different','unsure'].forEach(function(label){
      var b=el('button','',label+' ('+label[0]+')'); b.type='button';
      b.setAttribute('data-label',label); b.disabled=!!it.saved;
      b.addEventListener('click',function(){S.pair=p; label_(label);});
      cell.appendChild(b);
    });
    row.appendChild(cell); body.appendChild(row);
  });
  table.appendChild(body); itemEl.appendChild(table);
  if(it.saved){itemEl.appendChild(el('span','saved','saved'));}
}
function answersCol(title,answers){
  var col=el('div','col'); col.appendChild(el('h3','',title));
  answers.forEach(function(a){
    var box=el('div','answer',a.text);
    if(a.count>1){box.appendChild(el('span','cnt','\u00d7'+a.count));}
    col.appendChild(box);
  });
  return col;
}
function renderChange(it){
  if(it.gold){itemEl.appendChild(el('div','gold','gold: '+it.gold.join(' | ')));}
  var cols=el('div','cols');
  cols.appendChild(answersCol('old: '+it.old_state,it.old));
  cols.appendChild(answersCol('new: '+it.new_state,it.new));
  itemEl.appendChild(cols);
  if(it.diff){
    var d=el('div','diff'); d.appendChild(el('b','','word diff (old \u2192 new): '));
    it.diff.forEach(function(run){
      var tag=run[0]==='-'?'del':(run[0]==='+'?'ins':'span');
      d.appendChild(el(tag,'',run[1])); d.appendChild(document.createTextNode(' '));
    });
    itemEl.appendChild(d);
  }
  var box=el('div','decide'), chosen=S.decision[it.question_id]||
    (it.decision?it.decision.decision:'');
  ['regression','improvement','neutral','unclear'].forEach(function(dec){
    var key={regression:'r',improvement:'i',neutral:'n',unclear:'c'}[dec];
    var b=el('button',dec===chosen?'on':'',DECISION_NAMES[dec]+' ('+key+')');
    b.type='button'; b.setAttribute('data-decision',dec);
    b.addEventListener('click',function(){decide(dec);});
    box.appendChild(b);
  });
  itemEl.appendChild(box);
  var note=el('input'); note.id='note'; note.type='text'; note.maxLength=4000;
  note.placeholder='note (Enter saves)';
  note.value=it.decision?it.decision.note:'';
  itemEl.appendChild(note);
  if(it.decision){
    itemEl.appendChild(el('p','saved','saved: '+DECISION_NAMES[it.decision.decision]+' by '+
      it.decision.annotator+' at '+it.decision.at+(it.decision.note?'; note: '+
      it.decision.note:'')));
  }
}
function render(){
  renderProgress(); renderList();
  var typing=noteDraft();
  itemEl.textContent='';
  var it=S.items[S.cur];
  if(!it){itemEl.appendChild(el('p','',MODE==='label'?'no questions to label':
    'no changed questions to review')); return;}
  itemEl.setAttribute('data-qid',it.question_id);
  itemEl.appendChild(el('div','qid',it.question_id));
  itemEl.appendChild(el('div','question',it.question));
  if(MODE==='label'){renderLabel(it);}else{renderChange(it);}
  if(typing&&typing.qid===it.question_id){  // a save's answer must not wipe a note being typed
    var note=document.getElementById('note');
    note.value=typing.value; note.focus(); note.setSelectionRange(typing.at,typing.at);
  }
}
function noteDraft(){
  var a=document.activeElement;
  return a&&a.id==='note'?{qid:itemEl.getAttribute('data-qid'),value:a.value,
    at:a.selectionStart||0}:null;
}

// ---- label mode
function label_(label){
  var it=S.items[S.cur]; if(!it||MODE!=='label'){return;}
  if(it.saved){say(it.question_id+' is saved; its labels cannot change'); return;}
  var d=S.drafts[it.question_id]||(S.drafts[it.question_id]={});
  d[it.pairs[S.pair]]=label;
  var next=-1;
  for(var k=1;k<=it.pairs.length;k++){
    var p=(S.pair+k)%it.pairs.length; if(!d[it.pairs[p]]){next=p; break;}
  }
  if(next>=0){S.pair=next; render(); return;}
  render(); saveLabels(it);
}
function group(n){
  var it=S.items[S.cur]; if(!it||MODE!=='label'||it.saved){return;}
  var g=S.groups[it.question_id]||(S.groups[it.question_id]={});
  var free=it.answers.filter(function(a){return !g[a.item];});
  if(!free.length){g={}; S.groups[it.question_id]=g; free=it.answers;}
  g[free[0].item]=n;
  if(free.length>1){render(); return;}
  var byGroup={}, order=[];
  it.answers.forEach(function(a){
    var k=g[a.item]; if(!byGroup[k]){byGroup[k]=[]; order.push(k);} byGroup[k].push(a.item);
  });
  order.sort(function(x,y){return x-y;});
  render();
  saveLabels(it,'/api/groups',{question_id:it.question_id,
    groups:order.map(function(k){return byGroup[k];})});
}
function saveLabels(it,path,body){
  var qid=it.question_id; if(S.pending[qid]){return;}
  S.pending[qid]=true; say('saving '+qid+'\u2026');
  api('POST',path||'/api/labels',body||{question_id:qid,labels:S.drafts[qid]}).then(function(j){
    S.pending[qid]=false; replace(j.item); S.progress=j.progress;
    say('saved '+qid);
    var at=S.items.findIndex(function(x){return x.question_id===qid;});
    if(at===S.cur){
      var nxt=S.items.findIndex(function(x,i){return i>at&&!x.saved&&matches(x);});
      if(nxt>=0){select(nxt,0); return;}
    }
    render();
  },function(err){
    S.pending[qid]=false; say('not saved ('+qid+'): '+err.message,true);
    if(err.status===409){delete S.drafts[qid]; delete S.groups[qid]; refresh();}
  });
}
function refresh(){
  // what the run holds now (a 409: saved elsewhere, or locked); the message stays shown
  api('GET','/api/items').then(function(j){
    S.items=j.items; S.progress=j.progress; S.listKey=null; render();
  },
    function(err){say('cannot load: '+err.message,true);});
}
function replace(item){
  S.items.forEach(function(x,i){if(x.question_id===item.question_id){S.items[i]=item;}});
}
function finish(){
  var b=document.getElementById('finish'); if(!b||b.disabled){return;}
  if(!S.armed){S.armed=true; b.textContent='press L (or click) again to lock your labels'; return;}
  S.armed=false;
  api('POST','/api/finish',{}).then(function(j){
    S.progress=j.progress; say('your labels are locked'); renderProgress();
  },function(err){
    say('not locked: '+err.message,true); b.textContent=LOCK_TEXT;
    if(err.status===409){refresh();}
  });
}

// ---- change mode
function decide(dec){
  var it=S.items[S.cur]; if(!it||MODE!=='change'){return;}
  S.decision[it.question_id]=dec; saveDecision(it,dec);
}
function saveDecision(it,dec){
  var qid=it.question_id, note=document.getElementById('note');
  var text=note?note.value:'';
  say('saving '+qid+'\u2026');
  api('POST','/api/decisions',{question_id:qid,decision:dec,note:text,
    shown_sha256:it.shown_sha256}).then(function(j){
    replace(j.item); S.progress=j.progress; delete S.decision[qid];
    say('saved '+qid+': '+DECISION_NAMES[dec]); render();
  },function(err){
    say('not saved ('+qid+'): '+err.message,true);
    if(err.status===409){refresh();}else{render();}
  });
}

// ---- search: typing filters the list; Enter goes to the first match and Esc back to where
// the search began, and either clears the filter
function clearFilter(){
  search.value=''; S.filter=''; search.blur();
}
function searchDone(go){
  var vis=visible(), to=go?vis[0]:S.before;
  if(go&&to===undefined){say('no question matches '+JSON.stringify(search.value),true); return;}
  clearFilter(); say('');
  if(to>=0&&to<S.items.length){select(to,to===S.cur?S.pair:0);}else{render();}
}
function noteKey(){
  var note=document.getElementById('note'); if(!note){return;}
  note.focus(); note.setSelectionRange(note.value.length,note.value.length);
}

// ---- keys
function onKey(e){
  if(e.ctrlKey||e.metaKey||e.altKey){return;}
  var t=e.target, typing=t&&(t.tagName==='INPUT'||t.tagName==='TEXTAREA');
  if(typing){
    if(e.key==='Escape'&&t===search){e.preventDefault(); searchDone(false);}
    else if(e.key==='Escape'){t.blur(); e.preventDefault();}
    else if(e.key==='Enter'&&t.id==='note'){
      e.preventDefault(); var it=S.items[S.cur];
      var dec=S.decision[it.question_id]||(it.decision?it.decision.decision:'');
      if(!dec){say('mark r / i / n / c first',true); return;}
      saveDecision(it,dec);
    }else if(e.key==='Enter'&&t===search){
      e.preventDefault(); searchDone(true);
    }
    return;
  }
  var k=e.key;
  if(k==='j'||k==='ArrowDown'||k==='ArrowRight'){step(1);}
  else if(k==='k'||k==='ArrowUp'||k==='ArrowLeft'){step(-1);}
  else if(k==='/'){if(!S.filter){S.before=S.cur;} search.focus(); search.select();}
  else if(k==='Escape'&&S.filter){clearFilter(); render();}
  else if(MODE==='label'&&k==='L'){finish();}
  else if(MODE==='change'&&k==='e'){noteKey();}
  else if(k==='h'||k==='?'){helpEl.hidden=!helpEl.hidden;}
  else if(MODE==='label'&&LABEL_KEYS[k]){label_(LABEL_KEYS[k]);}
  else if(MODE==='label'&&/^[1-9]$/.test(k)){group(Number(k));}
  else if(MODE==='change'&&DECISION_KEYS[k]){decide(DECISION_KEYS[k]);}
  else{return;}
  e.preventDefault();
}
document.addEventListener('keydown',onKey);
search.addEventListener('focus',function(){if(!S.filter){S.before=S.cur;}});
search.addEventListener('input',function(){
  S.filter=search.value.toLowerCase(); var vis=visible();
  if(vis.length&&vis.indexOf(S.cur)<0){S.cur=vis[0]; S.pair=0;}
  render();
});
document.getElementById('help-btn').addEventListener('click',function(){
  helpEl.hidden=!helpEl.hidden;
});
var fin=document.getElementById('finish'); if(fin){fin.addEventListener('click',finish);}
function fromHash(){
  var m=/^#q=(.*)$/.exec(location.hash); if(!m){return -1;}
  var id=decodeURIComponent(m[1]);
  return S.items.findIndex(function(x){return x.question_id===id;});
}
window.addEventListener('hashchange',function(){var i=fromHash(); if(i>=0&&i!==S.cur){select(i,0);}});
api('GET','/api/items').then(function(j){
  S.items=j.items; S.progress=j.progress;
  var i=fromHash(); if(i<0){i=S.items.findIndex(function(x){return !done(x);});}
  if(i<0){i=0;}
  if(S.items.length){select(i,0);}else{render();}
  document.body.setAttribute('data-ready','1');
},function(err){say('cannot load: '+err.message,true); document.body.setAttribute('data-ready','error');});
})();
