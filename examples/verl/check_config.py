"""verl's own config check for a `main_ppo` command line, without starting Ray or a model.

    python examples/verl/check_config.py KEY=VALUE ...     # the overrides train_grpo.sh passes

Composes verl's `ppo_trainer` config with the overrides (Hydra, as `main_ppo` does), runs the checks
`main_ppo.main` runs before anything else (`validate_config`, with the reference policy and critic it
needs), imports the modules the trainer imports next (`transfer_queue`, the reward function), and
says whether a CUDA GPU is here. Exit 0: config valid and a GPU present; 3: config valid, no GPU
(the run needs one); 1: the config is refused (verl's message).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    import verl.trainer.main_ppo as main_ppo
    from hydra import compose, initialize_config_dir
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config
    from verl.utils.device import auto_set_device

    config_dir = str(Path(main_ppo.__file__).parent / "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        config = compose(config_name="ppo_trainer", overrides=argv)
    auto_set_device(config)
    try:
        validate_config(
            config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config)
        )
    except (AssertionError, ValueError) as e:
        print(f"verl's config check refused it: {e}", file=sys.stderr)
        return 1
    for module in ("transfer_queue",):  # main_ppo's TaskRunner imports it first thing
        try:
            importlib.import_module(module)
        except ImportError:
            print(f"{module} is missing: pip install -e '.[train]' (verl needs it)", file=sys.stderr)
            return 1
    fn = config.reward.custom_reward_function
    if fn.get("path"):
        from verl.trainer.ppo.reward import get_custom_reward_fn

        get_custom_reward_fn(config)  # loads it as verl does: a path or module that fails here fails there
    print("verl's config check passed")
    import torch

    if not torch.cuda.is_available():
        print("no CUDA GPU here: the rollout (vLLM) and the update need one", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
