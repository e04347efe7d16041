"""milco: MILCO, multilingual learned sparse retrieval through an English lexical pivot (card 12).

MILCO-mini on LibreOffice help EN-ES and SWORD Bible pairs: SAP against a lexical teacher, stage-2 contrastive
training with FLOPS and USE-multilingual distillation, LexEcho, mass/top-k pruning on a scipy inverted index,
against BM25, a dense bi-encoder, USE-multilingual and two ablations. Components: ``components.sparse_retrieval``.
"""
