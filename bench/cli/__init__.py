"""The `infermeter` command line: the click groups `calc`, `bench` and `registry`.

Each command parses its options, calls one library function and prints; library errors become
one-line messages here and nowhere else. `console` is the console script (quiet on Ctrl-C while
the CLI imports), `main` assembles the groups; `calc*` are `infermeter calc …`, `bench*` and
`fleet` `infermeter bench …`, `registry*`, `harvest` and `migrate` `infermeter registry …`;
`oneline` makes usage errors one line, `calc_tables` prints the calculators' tables.
"""
