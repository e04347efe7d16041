"""Generators of the junk that web-text quality filters are built to remove.

Each kind targets rules from Gopher (Rae et al. 2021) and C4 (Raffel et al.
2020), as implemented in datatrove's filters:
- ``symbol_soup``: symbol-to-word ratio above 0.1, under 80% of words alphabetic;
- ``repeated_lines``: a few lines repeated (duplicate-line fraction above 0.3);
- ``lorem_ipsum``: C4 drops any page containing "lorem ipsum";
- ``code``: C4 drops pages with curly braces or "javascript";
- ``boilerplate``: navigation, cookie and legal lines, bullets and ellipses
  (Gopher's bullet and ellipsis rules, C4's "terms of use"/"cookie" lines).
Every generator takes a seeded ``random.Random`` and a target size in
characters, so junk is varied, repeatable and sized like real documents.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

JUNK_KINDS = ("symbol_soup", "repeated_lines", "lorem_ipsum", "code", "boilerplate")

_SYMBOLS = [
    "#",
    "##",
    "###",
    "$$",
    "@",
    "&&",
    "***",
    "|",
    "||",
    "~~",
    "^",
    "%",
    "+++",
    "==",
    ">>",
    "<<",
    "??",
    "!!!",
    "...",
    "…",
    "★★",
    "►",
    "■",
    "▓▒░",
    "•",
    "§",
    "¤",
    "¦",
    "[]",
    "{}",
    "//",
    "\\\\",
    "--",
    "__",
]
_SPAM = ["free", "win", "click", "now", "best", "deal", "xxx", "top", "cheap", "buy", "lol", "omg", "new", "hot"]
_LOREM = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "ad",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "aliquip",
    "ex",
    "ea",
    "commodo",
    "consequat",
    "duis",
    "aute",
    "irure",
    "in",
    "reprehenderit",
    "voluptate",
    "velit",
    "esse",
    "cillum",
    "eu",
    "fugiat",
    "nulla",
    "pariatur",
    "excepteur",
    "sint",
    "occaecat",
    "cupidatat",
    "non",
    "proident",
    "sunt",
    "culpa",
    "qui",
    "officia",
    "deserunt",
    "mollit",
    "anim",
    "id",
    "est",
    "laborum",
]
_IDENTS = [
    "data",
    "item",
    "user",
    "config",
    "value",
    "result",
    "node",
    "count",
    "index",
    "buffer",
    "handler",
    "request",
    "response",
    "options",
    "element",
    "state",
    "cache",
    "token",
    "widget",
    "payload",
]
_COMPANIES = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark", "Wayne", "Tyrell", "Cyberdyne"]
_NAV = [
    "Home",
    "About Us",
    "Products",
    "Services",
    "Blog",
    "Contact",
    "FAQ",
    "Careers",
    "Shop",
    "Login",
    "Sign Up",
    "Support",
    "News",
    "Gallery",
    "Events",
    "Pricing",
    "Help",
    "Sitemap",
    "Downloads",
    "Forum",
]
_LEGAL = [
    "This website uses cookies to ensure you get the best experience on our website.",
    "By continuing to browse, you agree to our Cookie Policy.",
    "Accept all cookies",
    "Privacy Policy | Terms of Use | Cookie Policy",
    "Please enable JavaScript to view this page.",
    "Subscribe to our newsletter",
    "Share on Facebook | Share on Twitter | Pin it",
    "Click here to read more...",
    "Related posts...",
    "Leave a comment",
    "Skip to main content",
    "Back to top",
    "Powered by WordPress",
]


def _fill(rng: random.Random, size: int, piece: Callable[[], str], sep: str = " ") -> str:
    """Concatenate ``piece()`` results until the text reaches ``size`` characters."""
    out: list[str] = []
    n = 0
    while n < size:
        p = piece()
        out.append(p)
        n += len(p) + len(sep)
    return sep.join(out)


def symbol_soup(rng: random.Random, size: int, donor: str) -> str:
    """Runs of symbols, numbers and spam words, broken into short lines."""

    def token() -> str:
        r = rng.random()
        if r < 0.6:
            return rng.choice(_SYMBOLS) * rng.randint(1, 3)
        if r < 0.8:
            return rng.choice([str(rng.randint(0, 99999)), f"0x{rng.getrandbits(16):04X}", f"%{rng.randint(20, 99)}"])
        return rng.choice(_SPAM).upper() if rng.random() < 0.5 else rng.choice(_SPAM)

    def line() -> str:
        return " ".join(token() for _ in range(rng.randint(4, 14)))

    return _fill(rng, size, line, "\n")


def repeated_lines(rng: random.Random, size: int, donor: str) -> str:
    """Two to four lines (taken from a real document, or navigation text) repeated over and over."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", donor) if 20 <= len(s.strip()) <= 160]
    if len(sentences) >= 2 and rng.random() < 0.7:
        lines = rng.sample(sentences, min(len(sentences), rng.randint(2, 4)))
    else:
        lines = [" | ".join(rng.sample(_NAV, 5)), rng.choice(_LEGAL), f"{rng.choice(_COMPANIES)} - {rng.choice(_NAV)}"]
    i = -1

    def next_line() -> str:
        nonlocal i
        i += 1
        return lines[i % len(lines)]

    return _fill(rng, size, next_line, "\n")


def lorem_ipsum(rng: random.Random, size: int, donor: str) -> str:
    """Placeholder Latin in sentences and paragraphs, opening with the classic phrase."""

    def sentence() -> str:
        words = [rng.choice(_LOREM) for _ in range(rng.randint(6, 18))]
        return " ".join(words).capitalize() + rng.choice([".", ".", ".", "?", ";"])

    def paragraph() -> str:
        return " ".join(sentence() for _ in range(rng.randint(3, 7)))

    head = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. "
    return head + _fill(rng, max(0, size - len(head)), paragraph, "\n\n")


def _js(rng: random.Random) -> str:
    f, a, b = rng.sample(_IDENTS, 3)
    return (
        f"function {f}({a}, {b}) {{\n  if (!{a}) {{ return null; }}\n"
        f"  var {b}_{rng.randint(0, 99)} = {a}.map(function(x) {{ return x * {rng.randint(2, 9)}; }});\n"
        f"  document.getElementById('{b}').innerHTML = {a}.length;\n  return {b};\n}}"
    )


def _css(rng: random.Random) -> str:
    sel = rng.choice([".", "#"]) + rng.choice(_IDENTS) + rng.choice(["", ":hover", " > a", " li"])
    props = [
        f"margin: {rng.randint(0, 40)}px",
        f"color: #{rng.getrandbits(24):06x}",
        "display: flex",
        f"font-size: {rng.randint(9, 24)}px",
        f"z-index: {rng.randint(1, 999)}",
        "position: absolute",
    ]
    return sel + " {\n" + "".join(f"  {p};\n" for p in rng.sample(props, rng.randint(2, 5))) + "}"


def _python(rng: random.Random) -> str:
    f, a, b = rng.sample(_IDENTS, 3)
    return (
        f"def {f}({a}):\n    {b} = {{}}\n    for k, v in {a}.items():\n        if v is not None:\n"
        f"            {b}[k] = v + {rng.randint(1, 9)}\n    return {b}"
    )


def code(rng: random.Random, size: int, donor: str) -> str:
    """JavaScript, CSS and Python snippets, the inline code C4 and the card's "aesthetic" filter target."""
    return _fill(rng, size, lambda: rng.choice([_js, _js, _css, _python])(rng), "\n\n")


def boilerplate(rng: random.Random, size: int, donor: str) -> str:
    """Web page chrome: menus, bullets, cookie and legal notices, teaser lines ending in ellipses."""
    company = rng.choice(_COMPANIES)

    def line() -> str:
        r = rng.random()
        if r < 0.3:
            return " | ".join(rng.sample(_NAV, rng.randint(3, 7)))
        if r < 0.55:
            return f"• {rng.choice(_NAV)}"
        if r < 0.8:
            return rng.choice(_LEGAL)
        if r < 0.9:
            return f"© {rng.randint(2005, 2025)} {company} Inc. All rights reserved."
        return f"{rng.choice(_NAV)}: {rng.choice(_SPAM)} {rng.choice(_IDENTS)} {rng.randint(1, 500)}..."

    return _fill(rng, size, line, "\n")


GENERATORS: dict[str, Callable[[random.Random, int, str], str]] = {
    "symbol_soup": symbol_soup,
    "repeated_lines": repeated_lines,
    "lorem_ipsum": lorem_ipsum,
    "code": code,
    "boilerplate": boilerplate,
}


def make_junk(kind: str, rng: random.Random, size: int, donor: str = "") -> str:
    """One junk text of ``kind`` of about ``size`` characters (``donor`` supplies real lines to repeat)."""
    return GENERATORS[kind](rng, size, donor).strip()
