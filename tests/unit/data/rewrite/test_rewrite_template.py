"""The template stand-in: deterministic, non-empty, shaped like each style."""

import pytest

from components.data.rewrite import STYLES, clean_paragraphs, split_sentences, template_rewrite
from components.errors import ParamsError

GCIDE = """Abuse \\A*buse"\\, n. [F. abus, L. abusus, fr. abuti. See {Abuse},
   v. t.]
   1. Improper treatment or use; application to a wrong or bad
      purpose; misuse; as, an abuse of our natural powers.
      [1913 Webster]

            Liberty may be endangered by the abuses of liberty.
                                                  --Madison.
      [1913 Webster]

   2. Physical ill treatment; injury.
      [1913 Webster]
"""
GLOSSES = (
    "entity: that which is perceived or known or inferred to have its own distinct existence\n"
    "physical entity: an entity that has physical existence\n"
)
PROSE = (
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in "
    'want of a wife.\n\n"My dear Mr. Bennet," said his lady to him one day, "have you heard that '
    'Netherfield Park is let at last?"'
)
RST = (
    "Scheduler design\n================\n\n.. note::\n\nThe kernel's **scheduler**   decides which task runs\n"
    "next on each CPU.  Tasks are kept in a ``red-black tree`` ordered by virtual runtime.\n"
)
DOCS = [
    {"id": "g", "text": GCIDE},
    {"id": "w", "text": GLOSSES},
    {"id": "a", "text": PROSE, "title": "Pride"},
    {"id": "l", "text": RST},
]


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("doc", DOCS, ids=[d["id"] for d in DOCS])
def test_template_is_deterministic_and_non_empty(doc, style):
    first = template_rewrite(doc, style)
    assert first.strip()
    assert template_rewrite(dict(doc), style) == first


@pytest.mark.parametrize("doc", DOCS, ids=[d["id"] for d in DOCS])
def test_qa_and_textbook_change_the_text(doc):
    assert template_rewrite(doc, "qa") != doc["text"]
    assert template_rewrite(doc, "textbook") != doc["text"]


def test_qa_turns_glosses_into_what_is_questions():
    out = template_rewrite({"id": "w", "text": GLOSSES}, "qa")
    assert "Q: What is the meaning of entity?\nA: That which is perceived" in out
    assert "Q: What is the meaning of physical entity?\nA: An entity that has physical existence" in out


def test_qa_reads_dictionary_headwords_and_numbered_senses():
    out = template_rewrite({"id": "g", "text": GCIDE}, "qa")
    assert "Q: What is the meaning of abuse?\nA: Improper treatment or use" in out
    assert "Q: What is another meaning of abuse?\nA: Physical ill treatment; injury." in out
    assert "1913 Webster" not in out


def test_qa_makes_fill_in_the_blank_questions_from_prose():
    out = template_rewrite({"id": "a", "text": PROSE}, "qa")
    assert "Q: Fill in the blank: It is a truth universally acknowledged" in out
    assert "must be in want of a ____.\nA: wife" in out


def test_hq_drops_markup_and_normalises_whitespace():
    out = template_rewrite({"id": "l", "text": RST}, "hq")
    assert "====" not in out and ".. note" not in out and "**" not in out and "``" not in out
    assert "The kernel's scheduler decides which task runs next on each CPU. Tasks are kept in a red-black" in out
    assert "  " not in out


def test_textbook_has_heading_and_numbered_explanation():
    out = template_rewrite({"id": "a", "text": PROSE, "title": "Pride"}, "textbook").split("\n")
    assert out[0] == "# Pride"
    numbered = [line for line in out if line[:2] in ("1.", "2.", "3.")]
    assert numbered[0].startswith("1. It is a truth universally acknowledged")
    assert any("Mr. Bennet" in line for line in numbered)  # the abbreviation does not split a sentence


def test_split_sentences_keeps_abbreviations_and_enumerators():
    assert split_sentences("Ask Mr. Smith. 2. Then go home! Fine?") == ["Ask Mr. Smith.", "2. Then go home!", "Fine?"]


def test_clean_paragraphs_starts_a_block_per_gloss_line():
    assert len(clean_paragraphs(GLOSSES)) == 2


def test_unknown_style_is_a_params_error():
    with pytest.raises(ParamsError, match="summary"):
        template_rewrite({"id": "a", "text": PROSE}, "summary")
