"""LLM-guided rewriting (HQ, QA, textbook) and a labelled template stand-in.

The heavy parts (torch, transformers) are imported only when an
:class:`LLMRewriter` generates, so the template path stays light.
"""

from components.data.rewrite.cache import RewriteCache
from components.data.rewrite.corpus import rewrite_corpus, select_llm_sample
from components.data.rewrite.llm import LLMRewriter
from components.data.rewrite.mix import doc_bytes, mix_synthetic
from components.data.rewrite.prompts import PROMPTS, STYLES, build_messages, prompt_hash
from components.data.rewrite.template import TEMPLATE_NAME, clean_paragraphs, split_sentences, template_rewrite

__all__ = [
    "PROMPTS",
    "STYLES",
    "TEMPLATE_NAME",
    "LLMRewriter",
    "RewriteCache",
    "build_messages",
    "clean_paragraphs",
    "doc_bytes",
    "mix_synthetic",
    "prompt_hash",
    "rewrite_corpus",
    "select_llm_sample",
    "split_sentences",
    "template_rewrite",
]
