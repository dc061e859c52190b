"""The whole training config is validated before any work starts (``clarisql train``)."""

from __future__ import annotations

import pytest

from clarisql.cli import main
from clarisql.training.config import ConfigError, load_config
from clarisql.training.validate import validate_config

pytest.importorskip("trl", reason="the train extra is not installed")


def check(*overrides: str) -> None:
    validate_config(load_config("tiny-cpu-grpo", list(overrides)))


def test_shipped_recipes_validate() -> None:
    for name in ("tiny-cpu-grpo", "tiny-cpu-ppo"):
        validate_config(load_config(name))


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "grpo.num_generatoins=4",
            r"grpo\.num_generatoins \(did you mean grpo\.num_generations\?\)",
        ),
        (
            "warm_start.max_stpes=3",
            r"warm_start\.max_stpes \(did you mean warm_start\.max_steps\?\)",
        ),
        ("model.tiny.hiden_size=32", r"model\.tiny\.hiden_size"),
        ("model.lora={r: 8, alpah: 16}", r"model\.lora\.alpah"),
        ("format.tool=true", r"format: .*unknown key"),
        ("grpo.num_generations=3", r"grpo: .*divisible by num_generations"),
        ("env.max_turns=0", r"env\.max_turns must be a positive integer"),
        ("env.reward=no-such-spec", r"env\.reward"),
        ("format.tools=false", r"format\.tools must be true for GRPO"),
    ],
)
def test_bad_keys_and_values_fail_at_once(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check(override)


def test_print_config_validates(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["train", "--config", "tiny-cpu-grpo", "grpo.lerning_rate=1", "--print-config"]) == 2
    )
    err = capsys.readouterr().err
    assert "grpo.lerning_rate" in err and "did you mean grpo.learning_rate" in err
    assert main(["train", "--config", "tiny-cpu-grpo", "--print-config"]) == 0
    assert "trainer: grpo" in capsys.readouterr().out
