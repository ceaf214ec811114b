"""The RL workload (`workload.RLWorkload`): RLlib configs' checks, `--set` overrides,
`--smoke` shrinking, the PBT learner check, export to ONNX/TorchScript, the bf16 Learner."""
