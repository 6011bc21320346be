#!/usr/bin/env bash
# GRPO with verl on CompoWorld tasks: needs GPUs and vLLM (pip install 'verl[vllm]'), and a model that
# writes hermes tool calls (Qwen2.5/Qwen3 instruct). Check the data path on a CPU first:
# python examples/verl/run_cpu.py --tasks "$TASKS"
set -euo pipefail
TASKS=${TASKS:-runs/tasks.jsonl}
MODEL=${MODEL:-Qwen/Qwen2.5-3B-Instruct}
OUT=${OUT:-runs/verl}
MODE=${MODE:-gateway}      # gateway: 5 tools in every prompt; direct: the task's services' tools (long prompts)
REWARD=${REWARD:-score}    # score (verifier's partial score), V (0/1) or wildawm (-1 on format failure)
GPUS=${GPUS:-1}

compoworld export rl --tasks "$TASKS" --format verl --mode "$MODE" --out "$OUT/train.parquet"
compoworld export verl-tools --mode "$MODE" --tasks "$TASKS" --reward "$REWARD" --out "$OUT/tool_config.yaml"
REWARD_FN=$(python -c "import compoworld.integrations.verl as m; print(m.__file__)")

python -m verl.trainer.main_ppo \
  algorithm.adv_estimator=grpo \
  data.train_files="$OUT/train.parquet" \
  data.val_files="$OUT/train.parquet" \
  data.train_batch_size=16 \
  data.max_prompt_length=4096 \
  data.max_response_length=12288 \
  actor_rollout_ref.model.path="$MODEL" \
  actor_rollout_ref.actor.optim.lr=1e-6 \
  actor_rollout_ref.actor.ppo_mini_batch_size=16 \
  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1 \
  actor_rollout_ref.rollout.name=vllm \
  actor_rollout_ref.rollout.n=8 \
  actor_rollout_ref.rollout.multi_turn.enable=True \
  actor_rollout_ref.rollout.multi_turn.format=hermes \
  actor_rollout_ref.rollout.multi_turn.max_assistant_turns=40 \
  actor_rollout_ref.rollout.multi_turn.max_parallel_calls=4 \
  actor_rollout_ref.rollout.multi_turn.max_tool_response_length=4096 \
  actor_rollout_ref.rollout.multi_turn.tool_config_path="$OUT/tool_config.yaml" \
  actor_rollout_ref.rollout.agent.default_agent_loop=tool_agent \
  reward.custom_reward_function.path="$REWARD_FN" \
  reward.custom_reward_function.name=compute_score \
  +reward.custom_reward_function.reward_kwargs.reward="$REWARD" \
  trainer.n_gpus_per_node="$GPUS" \
  trainer.nnodes=1 \
  trainer.total_epochs=1 \
  trainer.logger=console \
  "$@"
