#!/usr/bin/env python3
"""Finishes the man page generate-manual wrote: the EXIT STATUS section made from questbak's own
table, the sections it cannot generate (ENVIRONMENT and FILES before EXIT STATUS, EXAMPLES and SEE
ALSO after it, in mdoc's order) from man/*.mdoc, and each blank line of a discussion, which mdoc
warns about, made a paragraph break (.Pp)."""
import sys

page_path, table_path, before_path, after_path, output_path = sys.argv[1:6]
page = open(page_path).read()
table = open(table_path).read().rstrip("\n")
before = open(before_path).read().rstrip("\n")
after = open(after_path).read().rstrip("\n")
assert page.count(".Ex -std") == 1, "generate-manual wrote no single .Ex -std"
heading = '.Sh "EXIT STATUS"\n.Ex -std'
assert page.count(heading) == 1, "generate-manual wrote no single EXIT STATUS section"
page = page.replace(heading, before + "\n" + '.Sh "EXIT STATUS"\n' + table)
page = page.rstrip("\n") + "\n" + after + "\n"
lines = [".Pp" if line.strip() == "" else line for line in page.rstrip("\n").split("\n")]
open(output_path, "w").write("\n".join(lines) + "\n")
