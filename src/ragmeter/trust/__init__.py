"""How far a judge can be trusted: its agreement with people's labels, measured.

- ``agreement_set``: the bundled hand-labeled claim set (``agreement/``, with the prompt-part sets
  the local judge was measured on) and ``ragmeter judge-check``'s verdict agreement on it;
- ``mtrag_set`` and ``mtrag_check``: MTRAG's rated answers (``mtrag/``) and how a judge's claim
  metrics rank them against people (``judge-check --set mtrag-dev``);
- ``judge_agreement``: a run's judged scores against human labels, and the prediction-powered
  estimate of a metric's mean (``ragmeter agreement RUN --labels F``);
- ``judge_uncertainty``: a judged metric's measured agreement, shown beside it in reports.

What the bundled local judge was measured to do, which it reads to decide what it serves, is
:mod:`ragmeter.judges.local.agreement`; the labelers' agreement with each other is
:mod:`ragmeter.label.agreement`.
"""
