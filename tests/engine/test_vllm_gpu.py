"""The backend contract against a real vLLM that DocDesk's own `vllm` backend starts as its child,
on a GPU machine (tests/bench/gpu_run.sh measure-vllm-contract). DOCDESK_VLLM_MODEL names a model
folder; with a folder of tests/bench/vllm_model_folder.py the weights are random
(`--load-format dummy`), which the contract does not mind: it checks the machinery (streams, stops,
limits, cancel, threads, the process group), not what the model says. Skipped without vLLM, a GPU
or DOCDESK_VLLM_MODEL; the results of the real run are in tests/bench/results/."""

from __future__ import annotations

import importlib.util
import os

import pytest

from engine.backends import LlmSettings, create_backend
from tests.contracts.backend_contract import BackendContract, check_process_group_gone

MODEL = os.environ.get("DOCDESK_VLLM_MODEL", "")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not MODEL or importlib.util.find_spec("vllm") is None, reason="no vLLM or DOCDESK_VLLM_MODEL"),
]


def settings() -> LlmSettings:
    vllm = {
        "max_num_seqs": 4,
        "gpu_memory_utilization": 0.4,  # two at once: test_close_is_idempotent starts a second
        "extra_args": ["--load-format", "dummy", "--seed", "0"],
        "startup_timeout": 900,
    }
    return LlmSettings(backend="vllm", model=MODEL, context=2048, vllm=vllm)


@pytest.fixture(scope="module")
def real_vllm(tmp_path_factory):
    backend = create_backend(settings(), log_dir=tmp_path_factory.mktemp("vllm-logs"))
    yield backend
    backend.close()


class TestRealVllmContract(BackendContract):
    # vLLM's 400 for a prompt past --max-model-len is read as ContextTooLong (the contract's default)

    @pytest.fixture
    def backend(self, real_vllm):
        return real_vllm

    @pytest.fixture(autouse=True)
    def _logs(self, tmp_path):
        self.log_dir = tmp_path

    def make_backend(self):
        return create_backend(settings(), log_dir=self.log_dir)

    def warm_state(self, backend) -> object:
        return backend._client, backend._process

    def check_released(self, backend, state) -> None:
        check_process_group_gone(backend, state)  # vLLM's API server and engine core both
