"""Checks that test no single module, so they have no module's file to live in: the seed
article's tables through the public API (test_seed_tables), every command README shows
(test_readme_commands, test_readme_records_actions), trec_eval's own test suite, its 10.0 binary
and pytrec_eval as oracles for the trec mode (test_trec_reference, test_trec_eval_binary,
test_trec_differential), and the package layering read from every module's imports
(test_layers)."""
