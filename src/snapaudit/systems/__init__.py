"""Systems under audit: what answers a question in one state.

``base`` holds the interface every system implements, ``http`` the adapter for a deployed
service, ``transport`` the bounded async HTTP client and ``config`` their protocol sections.
The run builds the system of each state (:mod:`snapaudit.run.systems`).
"""
