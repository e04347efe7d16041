"""MILCO-style multilingual learned sparse retrieval: parallel EN-ES data, the lexical teacher, the sparse encoder
(connector + MLM head over an English lexical space, LexEcho), its losses and training, pruning, an inverted index,
and the baselines (BM25, dense bi-encoder, USE-multilingual). Framework-free: no Prefect, MLflow or DVC imports."""
