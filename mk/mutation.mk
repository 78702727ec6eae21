# make mutation: every mutant of t/mutants.list applied alone to a scratch
# copy of the tree, built, and run against the tests it names (t/mutate);
# it fails if one survives or no longer applies. Tens of minutes: outside
# `make check`. MUTANTS="id ..." runs only those; MUTATION_TIMEOUT bounds
# each test binary's run (s).
.PHONY: mutation

mutation:
	@t/mutate $(MUTANTS)
