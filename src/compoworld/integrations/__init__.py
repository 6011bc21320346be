"""Trainer adapters (layer 6; may import every layer below, never `cli`): TRL's environment factory
(`integrations.trl`), verl's tool and reward function (`integrations.verl`), and a tiny local model
for tests and examples (`integrations.tiny`).

Importing this package imports no trainer: each adapter imports its library when it is used
(`pip install 'compoworld[train]'`).
"""
