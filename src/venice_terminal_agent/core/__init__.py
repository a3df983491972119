"""What every run is made of: the loop, receipts, events, the error tree, the toolbox
protocol, the pager, consent, policy, costs, scrubbing, wording, defaults and plans.
Nothing here imports anything of ours outside `core` (tests/test_import_graph.py)."""
