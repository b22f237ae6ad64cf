"""`kubectl win doctor`: a pipeline, one module per stage, in the order data flows.

    read/          pages in: plan.py (what doctor reads, the one list), api.py (API pages, read a page
                   ahead on a bounded queue), typed.py (an API page decoded into records of the fields
                   read, straight from its bytes), dump.py (saved dumps in and out), bundle.py (a support bundle:
                   its cluster part, and each node's facts), fields.py (fields of any shape), reduce.py and
                   share.py (what a saved dump keeps, and its redaction)
    records.py     the records the checks read: plain frozen dataclasses, Snapshot holds them all
    build.py       objects in, records out, one object at a time (SnapshotBuilder)
    constructors.py  the pure record constructors the builder calls (one object in, one record out)
    folding.py     symptoms of events and container states, folded per check and object
    grouping.py    pods that share a template, and the controller each pod belongs to
    lint.py        explain's field rules on one pod template (run by the builder as templates arrive)
    scheduling.py  where a pod template can land (selectors, affinity, tolerations, RuntimeClasses)
    signatures/    failure signatures in messages (symptoms.py, structure.py) and node agents by name
    checks/        one module per area, each run(snapshot) -> findings, written through the one check
                   catalogue (kubectl_win/catalog.py); plan.py lists them in order; bundle*.py read the
                   nodes' facts a support bundle adds
    fixes.py       the structured fixes findings carry
    render/        report.py (DoctorReport, its JSON and tables), html.py (the shared page), progress.py
    run.py         run_doctor(options) -> DoctorReport: reads (live, dump or bundle), builds, checks,
                   applies the policy; deep.py: --deep on live nodes

Imports run down this list (tests/test_architecture.py); the one way back up is a check attaching the
structured fixes fixes.py builds.
"""
