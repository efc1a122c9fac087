"""ContextWeaver: dependency-structured context for tool-using LLM agents."""

from __future__ import annotations

from contextweaver.config import ModelConfig, WeaverConfig, load_config
from contextweaver.formats import Trajectory, TrajectoryError, load_trajectory
from contextweaver.graph import DependencyGraph
from contextweaver.strategies import strategy_factory, strategy_names
from contextweaver.types import (
    Decision,
    Node,
    Parent,
    Step,
    TestStatus,
    ValidationStatus,
    WovenContext,
)
from contextweaver.weave import BudgetError
from contextweaver.weaver import ContextWeaver

__all__ = [
    "BudgetError",
    "ContextWeaver",
    "Decision",
    "DependencyGraph",
    "ModelConfig",
    "Node",
    "Parent",
    "Step",
    "TestStatus",
    "Trajectory",
    "TrajectoryError",
    "ValidationStatus",
    "WeaverConfig",
    "WovenContext",
    "load_config",
    "load_trajectory",
    "strategy_factory",
    "strategy_names",
]
