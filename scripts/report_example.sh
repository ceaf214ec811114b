#!/usr/bin/env bash
# The README's report figure: PPO CartPole over three seeds, 100k env steps each
# (about 80 s on 2 CPUs on 2026-11-28), then the report and the learning-curve PNG copied to docs/.
set -euo pipefail
storage="${1:-/tmp/rlsuite_report_example}"
python -m rlsuite.run experiments/ppo_cartpole.py --seeds 3 --stop env_steps=100000 \
  --storage-path "$storage" --name ppo_cartpole
python -m rlsuite.report "$storage/ppo_cartpole" --output "$storage/report"
cp "$storage/report/learning_curves.png" docs/report_example.png
