"""NITR (Needle in the Repo): does an agent's change keep the code structurally right?

A protocol is loader + flow + grader + views:

    loader     ``evoci.nitr.loader``     probes from a checkout in the public layout (or ``probes/``, evoci's own)
    flow       ``evoci.flows.nitr``      per probe and attempt: step agents (TASK k only), then a grade node
    grader     ``evoci.nitr.evaluator``  the pipeline modules, run on a grading tree (``evoci.nitr.trees``)
    views      ``sql/views/nitr_*.sql``  Pass / F / S / B / E per probe, rates per run, dimension, granularity

Agents for a step (reference, command, llm, api) live in ``evoci.nitr.agents`` and
``evoci.nitr.api_mode``; facts are written by ``evoci.nitr.recorder`` only.
"""
