#!/usr/bin/env python3
"""Write a bash completion script for one tool from its own --help.

usage: completion.py TOOL OUT [SUBCOMMAND=HELP_COMMAND | HELP_COMMAND] ...

Each HELP_COMMAND (a command whose arguments are separated by spaces) is
run and its output read: every --option it names is completed, and an
option written with its words ("--map-by core|numa|socket") completes
those words; an option whose value is a FILE completes file names. With
SUBCOMMAND=, the options are those of that subcommand (topsync-bench
barrier, rcl, ...; "allreduce|reduce|bcast=" for several that share one
--help), and the first word completes the subcommands. The
build runs this (CMake, target completion), as man_page.py, so the
completion never drifts from the tools; unit.completion checks it in bash.
"""
import re
import subprocess
import sys

FILE_VALUES = ("FILE", "FILE.json", "PATH", "PROGRAM", "DIR", "FILE|STRING")


def options_of(text):
    """{option: [words] or 'file' or None} from a --help text."""
    found = {}
    # what stands in parentheses is prose, and may name another tool's
    # options ("lstopo --of xml", "topsync-tune --mpi")
    while re.search(r"\([^()]*\)", text):
        text = re.sub(r"\([^()]*\)", "", text)
    for m in re.finditer(r"(--[a-z][a-z0-9-]*)(?:[ =]([^\s\]\[,;()]+))?", text):
        option, value = m.group(1), m.group(2)
        words = None
        if value and value in FILE_VALUES:
            words = "file"
        elif value and "|" in value and re.fullmatch(r"[a-z0-9][a-z0-9-]*(\|[a-z0-9][a-z0-9-]*)+",
                                                     value):
            words = value.split("|")
        if option not in found or (found[option] is None and words):
            found[option] = words
    return found


def case_arms(options):
    arms = []
    for option, words in sorted(options.items()):
        if words == "file":
            arms.append('        %s) COMPREPLY=($(compgen -f -- "$cur")); return ;;' % option)
        elif words:
            arms.append('        %s) COMPREPLY=($(compgen -W "%s" -- "$cur")); return ;;'
                        % (option, " ".join(words)))
    return "\n".join(arms)


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    tool, out = argv[1], argv[2]
    per_sub = {}
    for spec in argv[3:]:
        sub = None
        if "=" in spec.split(" ", 1)[0]:
            sub, spec = spec.split("=", 1)
        text = subprocess.run(spec.split(" "), capture_output=True, text=True).stdout
        if not text:
            sys.exit("completion.py: no --help output from: %s" % spec)
        per_sub.setdefault(sub, {}).update(options_of(text))
    fn = "_" + tool.replace("-", "_")
    lines = ["# bash completion for %s, from its --help (scripts/completion.py)" % tool,
             "%s() {" % fn,
             '    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}',
             "    COMPREPLY=()"]
    subs = [s for s in per_sub if s]
    if subs:
        lines += ['    if [ "$COMP_CWORD" -eq 1 ]; then',
                  '        COMPREPLY=($(compgen -W "%s --help --version" -- "$cur"))'
                  % " ".join(w for sub in subs for w in sub.split("|")),
                  "        return",
                  "    fi",
                  '    case ${COMP_WORDS[1]} in']
        for sub in subs:
            lines += ["    %s)" % sub,
                      '        case $prev in',
                      case_arms(per_sub[sub]),
                      "        esac",
                      '        COMPREPLY=($(compgen -W "%s" -- "$cur")) ;;'
                      % " ".join(sorted(per_sub[sub]))]
        lines += ["    esac"]
    else:
        options = per_sub[None]
        lines += ['    case $prev in', case_arms(options), "    esac",
                  '    COMPREPLY=($(compgen -W "%s" -- "$cur"))' % " ".join(sorted(options))]
    lines += ["}", "complete -F %s %s" % (fn, tool), ""]
    with open(out, "w") as f:
        f.write("\n".join(l for l in lines if l != ""))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
