#!/usr/bin/env python3
"""tools/doc_links.py: no dead relative link in the docs, and an index that lists every page.

Checks, from the repository root:
  - every relative link in README.md, CONTRIBUTING.md and docs/*.md points at a file or folder
    that exists, and, when it carries #anchor into a Markdown file, at a heading of that file
    (GitHub's slugs: lower case, punctuation dropped, spaces as '-', -1/-2 for repeats);
  - docs/README.md (the index) links every .md page in docs/.
Links inside code blocks and `code spans` are not links and are skipped; http(s) and mailto
links are not fetched.

Exit 0 when all is well, 1 naming FILE:LINE and each dead link, 2 on a bad argument.
"""
import os
import re
import sys
import unicodedata

USAGE = """usage: tools/doc_links.py [--root DIR]

Checks that every relative link in README.md, CONTRIBUTING.md and docs/*.md
points at an existing file (and an existing heading for #anchor), and that
docs/README.md links every page in docs/.

  --root DIR  the repository (default: the parent of this script's folder)
  -h, --help  this text
"""

FENCE = re.compile(r'^\s*(```|~~~)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
CODE_SPAN = re.compile(r'(`+)(.+?)\1')
# [text](target) and ![alt](target); the target ends at whitespace or ')'. A title
# ("...") after the target is allowed and ignored.
LINK = re.compile(r'!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)')
REF_DEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)')


def slug(text):
    """GitHub's anchor for a heading's text."""
    text = LINK.sub(lambda m: m.group(1), text)       # a link shows its text
    text = re.sub(r'<[^>]+>', '', text)               # inline HTML tags
    out = []
    for ch in text.lower():
        cat = unicodedata.category(ch)
        if ch in '-_' or cat[0] in 'LN' or cat in ('Mn', 'Mc'):
            out.append(ch)
        elif ch == ' ':
            out.append('-')
        # everything else (punctuation, symbols, backticks) is dropped
    return ''.join(out)


def lines_outside_code(path):
    """(line number, text with code spans blanked) for each line outside fenced blocks."""
    with open(path, encoding='utf-8') as f:
        fenced = None
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fenced is None:
                    fenced = m.group(1)
                elif m.group(1) == fenced:
                    fenced = None
                continue
            if fenced is None:
                yield n, line.rstrip('\n')


_anchors = {}


def anchors(path):
    """The set of heading anchors GitHub makes for a Markdown file."""
    if path not in _anchors:
        seen = {}
        found = set()
        for _, line in lines_outside_code(path):
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            found.add(base if k == 0 else '%s-%d' % (base, k))
        _anchors[path] = found
    return _anchors[path]


def links(path):
    """(line number, target) for each link in a Markdown file."""
    for n, line in lines_outside_code(path):
        m = REF_DEF.match(line)
        if m:
            yield n, m.group(1)
            continue
        line = CODE_SPAN.sub(lambda m: ' ' * len(m.group(0)), line)
        for m in LINK.finditer(line):
            yield n, m.group(2)


def check_file(root, rel, errors):
    path = os.path.join(root, rel)
    targets = set()
    for n, target in links(path):
        if not target or re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target):
            continue                                  # http:, https:, mailto:, ...
        file_part, _, anchor = target.partition('#')
        if file_part:
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
        else:
            dest = path
        if not os.path.exists(dest):
            errors.append('%s:%d: dead link %s (no file %s)' % (rel, n, target, os.path.relpath(dest, root)))
            continue
        targets.add(os.path.relpath(dest, root))
        if anchor and dest.endswith('.md') and os.path.isfile(dest):
            if anchor not in anchors(dest):
                errors.append('%s:%d: dead link %s (no heading #%s in %s)'
                              % (rel, n, target, anchor, os.path.relpath(dest, root)))
    return targets


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = argv[1:]
    while args:
        a = args.pop(0)
        if a in ('-h', '--help'):
            sys.stdout.write(USAGE)
            return 0
        if a == '--root' and args:
            root = os.path.abspath(args.pop(0))
        else:
            sys.stderr.write('doc_links.py: unknown argument %r\n%s' % (a, USAGE))
            return 2
    docs = os.path.join(root, 'docs')
    pages = sorted(f for f in os.listdir(docs) if f.endswith('.md')) if os.path.isdir(docs) else []
    files = [f for f in ('README.md', 'CONTRIBUTING.md') if os.path.exists(os.path.join(root, f))]
    files += [os.path.join('docs', p) for p in pages]
    errors = []
    linked = {}
    for rel in files:
        linked[rel] = check_file(root, rel, errors)
    index = os.path.join('docs', 'README.md')
    if index not in linked:
        errors.append('%s: missing: the docs index must exist and link every page' % index)
    else:
        for p in pages:
            rel = os.path.join('docs', p)
            if rel != index and rel not in linked[index]:
                errors.append('%s: does not link %s (every page in docs/ needs a line in the index)'
                              % (index, rel))
    for e in errors:
        print(e)
    if errors:
        print('doc_links.py: %d problem(s) in %d files' % (len(errors), len(files)), file=sys.stderr)
        return 1
    print('doc_links.py: %d files, every relative link resolves, the index lists all %d pages'
          % (len(files), len(pages)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
