"""``snapaudit review``: a local web app for people in the loop.

Blind human labels of answer pairs (a judge named ``human:NAME``) and the change review
(regression / improvement / neutral / unclear per changed question), served on 127.0.0.1
with a per-session token. The data access is :mod:`snapaudit.review.data`, over the review
library of :mod:`snapaudit.run.after.review`; the page keeps the report's look and escaping.
"""
