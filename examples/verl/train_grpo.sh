#!/usr/bin/env bash
# GRPO with verl on CompoWorld tasks: needs GPUs and vLLM (pip install 'verl[vllm]'), and a model that
# writes hermes tool calls (Qwen2.5/Qwen3 instruct). On any machine it first runs verl's own config
# check (examples/verl/check_config.py) and stops before Ray when there is no GPU (exit 3).
# Check the data path on a CPU: python examples/verl/run_cpu.py --tasks "$TASKS"
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TASKS=${TASKS:-runs/tasks.jsonl}
MODEL=${MODEL:-Qwen/Qwen2.5-3B-Instruct}
OUT=${OUT:-runs/verl}
MODE=${MODE:-gateway}      # gateway: 5 tools in every prompt; direct: the task's services' tools (long prompts)
REWARD=${REWARD:-score}    # score (verifier's partial score), V (0/1) or wildawm (-1 on format failure)
GPUS=${GPUS:-1}
# Lengths a full reference rollout needs (`compoworld export rl` prints them for your tasks; over 200
# default tasks the longest is ~10.3k tokens, 26 turns, 8 calls in a turn, tool results of 10.1k chars).
# verl's defaults (256-char tool results, 1 call a turn) cut most rollouts: a cut rollout scores 0.
PROMPT_LEN=${PROMPT_LEN:-2048}           # gateway prompts are ~1k tokens; direct mode needs ~48k
RESPONSE_LEN=${RESPONSE_LEN:-16384}
TURNS=${TURNS:-64}
PARALLEL=${PARALLEL:-16}
TOOL_RESPONSE_LEN=${TOOL_RESPONSE_LEN:-16384}

compoworld export rl --tasks "$TASKS" --format verl --mode "$MODE" --out "$OUT/train.parquet"
compoworld export verl-tools --mode "$MODE" --tasks "$TASKS" --reward "$REWARD" --out "$OUT/tool_config.yaml"
REWARD_FN=$(python -c "import compoworld.integrations.verl as m; print(m.__file__)")

ARGS=(
  algorithm.adv_estimator=grpo
  data.train_files="$OUT/train.parquet"
  data.val_files="$OUT/train.parquet"
  data.train_batch_size=16
  data.max_prompt_length="$PROMPT_LEN"
  data.max_response_length="$RESPONSE_LEN"
  actor_rollout_ref.model.path="$MODEL"
  actor_rollout_ref.actor.optim.lr=1e-6
  actor_rollout_ref.actor.ppo_mini_batch_size=16
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1
  actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1
  actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=1
  actor_rollout_ref.rollout.name=vllm
  actor_rollout_ref.rollout.n=8
  actor_rollout_ref.rollout.multi_turn.enable=True
  actor_rollout_ref.rollout.multi_turn.format=hermes
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns="$TURNS"
  actor_rollout_ref.rollout.multi_turn.max_user_turns="$TURNS"
  actor_rollout_ref.rollout.multi_turn.max_parallel_calls="$PARALLEL"
  actor_rollout_ref.rollout.multi_turn.max_tool_response_length="$TOOL_RESPONSE_LEN"
  actor_rollout_ref.rollout.multi_turn.tool_config_path="$OUT/tool_config.yaml"
  actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent
  reward.custom_reward_function.path="$REWARD_FN"
  reward.custom_reward_function.name=compute_score
  +reward.custom_reward_function.reward_kwargs.reward="$REWARD"
  +reward.custom_reward_function.reward_kwargs.max_parallel_calls="$PARALLEL"
  +reward.custom_reward_function.reward_kwargs.max_tool_response_length="$TOOL_RESPONSE_LEN"
  trainer.n_gpus_per_node="$GPUS"
  trainer.nnodes=1
  trainer.total_epochs=1
  trainer.logger=console
)

python "$HERE/check_config.py" "${ARGS[@]}" "$@"
python -m verl.trainer.main_ppo "${ARGS[@]}" "$@"
