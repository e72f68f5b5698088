"""Decode tokens/s predicted from a card's bandwidth and the runs measured here (engine/models/decode_speed.py)."""

from __future__ import annotations

import pytest

from app.desk.doctor_text import render
from engine.backends.llama_cpp import bundled_model_path
from engine.models import decode_speed
from engine.models.doctor import GIB, Gpu, report

V100 = Gpu("Tesla V100-SXM2-32GB", "7.0", 32 * GIB, "535.183.01", "12.2")


@pytest.fixture
def measured(monkeypatch):
    """A table of our own: two cards for one runtime, one card for another."""

    def use(runs):
        monkeypatch.setattr(
            decode_speed,
            "table",
            lambda: {"bandwidth": {"V100": 900, "V100S": 1134, "H200": 4800, "H100 80GB": 3350}, "measured": runs},
        )
        decode_speed.fit.cache_clear()

    yield use
    decode_speed.fit.cache_clear()


def test_the_longest_card_name_in_the_table_wins():
    assert decode_speed.bandwidth_gbs("Tesla V100-SXM2-32GB") == 900
    assert decode_speed.bandwidth_gbs("Tesla V100S-PCIE-32GB") == 1134
    assert decode_speed.bandwidth_gbs("NVIDIA H100 80GB HBM3") == 3350
    assert decode_speed.bandwidth_gbs("Some Future Card") is None


def test_two_cards_give_efficiency_and_a_fixed_cost_per_token(measured):
    # made from 60% of bandwidth plus 5 ms a token, exactly: the fit gives them back
    bytes_ = 20e9

    def tok_s(bw):
        return 1000 / (bytes_ / 1e9 / bw * 1000 / 0.6 + 5.0)

    measured(
        [
            {"runtime": "r", "card": "NVIDIA H200", "bytes": bytes_, "tok_s": tok_s(4800), "source": "a"},
            {"runtime": "r", "card": "NVIDIA H100 80GB HBM3", "bytes": bytes_, "tok_s": tok_s(3350), "source": "b"},
        ]
    )
    fit = decode_speed.fit("r")
    assert fit.efficiency == pytest.approx(0.6) and fit.fixed_ms == pytest.approx(5.0)
    predicted = decode_speed.predict("Tesla V100-SXM2-32GB", int(bytes_), "r")
    assert predicted.tok_s == pytest.approx(tok_s(900))
    # a slow memory spends more of each token reading: a single share from the H200 would under-predict
    assert predicted.tok_s > 900 * (tok_s(4800) * bytes_ / 1e9 / 4800) / (bytes_ / 1e9)
    assert predicted.tok_s < predicted.bandwidth_limit_tok_s
    assert "predicted, not measured" in predicted.text and "H200 and NVIDIA H100" in predicted.text


def test_one_card_gives_the_share_of_bandwidth_it_reached(measured):
    measured([{"runtime": "r", "card": "NVIDIA H200", "bytes": 20e9, "tok_s": 72.0, "source": "a"}])
    fit = decode_speed.fit("r")
    assert fit.efficiency == pytest.approx(72.0 * 20 / 4800) and fit.fixed_ms == 0
    assert decode_speed.predict("Tesla V100-SXM2-32GB", int(20e9), "r").tok_s == pytest.approx(72.0 * 900 / 4800)


def test_an_unphysical_fit_falls_back_to_the_share(measured):
    # the faster card measured slower: no efficiency and fixed cost explain both
    measured(
        [
            {"runtime": "r", "card": "NVIDIA H200", "bytes": 20e9, "tok_s": 60.0, "source": "a"},
            {"runtime": "r", "card": "NVIDIA H100 80GB HBM3", "bytes": 20e9, "tok_s": 70.0, "source": "b"},
        ]
    )
    fit = decode_speed.fit("r")
    assert fit.fixed_ms == 0 and 0 < fit.efficiency < 1


def test_unknown_cards_and_runtimes_predict_nothing(measured):
    measured([{"runtime": "r", "card": "NVIDIA H200", "bytes": 20e9, "tok_s": 72.0, "source": "a"}])
    assert decode_speed.predict("Some Future Card", int(20e9), "r") is None
    assert decode_speed.predict("NVIDIA H200", int(20e9), "other") is None


def test_the_shipped_table_predicts_a_v100_below_its_memory_limit():
    for runtime in ("llama_cpp", "llama_server", "vllm"):
        predicted = decode_speed.predict(V100.name, 16_500_000_000, runtime)
        assert predicted is not None and 0 < predicted.tok_s < predicted.bandwidth_limit_tok_s


def test_the_doctor_shows_the_prediction_marked_as_one():
    result = report(bundled_model_path(), None, None, gpus=[V100])
    lines = result["decode_predicted"]
    assert [line.split(":")[0] for line in lines] == ["llama_cpp", "llama_server"]
    assert all("predicted, not measured" in line and "V100" in line for line in lines)
    assert "~ llama_cpp: ~" in render(result)
