"""anthrobench's full-profile loaders offline: an LM target named by a Hub id fails at once naming the id, and an
endpoint target is served by a loopback stub through the stage's own job function (never a real host)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from components.anthrobench.first_turns import generate_first_turns
from components.errors import OfflineError
from flows.anthrobench.dialogues import DialogueJob, dialogues_of
from flows.anthrobench.params import PRESETS, Params
from flows.runtime.params import resolve


class _Stub(BaseHTTPRequestHandler):
    """An OpenAI-style chat endpoint on loopback that echoes how many messages it got."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        reply = f"I hear you ({len(body['messages'])} messages, model {body['model']})."
        out = json.dumps({"choices": [{"message": {"role": "assistant", "content": reply}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def _job(target: str, tmp_path, **lm) -> DialogueJob:
    p = resolve(Params, PRESETS, slug="anthrobench", profile="smoke")
    rows = tuple(generate_first_turns()[:2])
    return DialogueJob(target, 0, rows, 2, p.hazards.model_dump(), {**p.targets.model_dump(), **lm}, str(tmp_path))


def test_hub_id_fails_at_once_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(OfflineError, match="no-such-org/no-such-model"):
        dialogues_of(_job("no-such-org/no-such-model", tmp_path))


def test_endpoint_target_runs_through_the_stage_job(tmp_path):
    server = HTTPServer(("127.0.0.1", 0), _Stub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/v1"
        out = dialogues_of(_job("endpoint:stub-model", tmp_path, endpoint_url=url))
    finally:
        server.shutdown()
        server.server_close()
    assert [len(d["turns"]) for d in out.dialogues] == [2, 2]
    assert out.dialogues[0]["turns"][1]["assistant"] == "I hear you (3 messages, model stub-model)."


def test_j3_loader_is_allow_listed_and_round_trips(tmp_path):
    from components.anthrobench.judges import J3_LOADER, LogRegJudge, save_j3
    from components.anthrobench.simulate import labelled_sentences
    from flows.runtime.mlflow_model import ALLOWED_LOADERS, resolve_loader

    judge = LogRegJudge().fit(labelled_sentences(10, seed=0))
    loaded = resolve_loader(J3_LOADER)(save_j3(judge, tmp_path / "j3"))
    texts = [r["text"] for r in labelled_sentences(5, seed=1, split="eval")]
    assert J3_LOADER in ALLOWED_LOADERS and (loaded.predict(texts) == judge.predict(texts)).all()
