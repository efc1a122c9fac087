"""ContextWeaver: dependency-structured context for tool-using LLM agents."""

from __future__ import annotations

from contextweaver.config import ModelConfig, WeaverConfig, load_config
from contextweaver.errors import ContextWeaverError
from contextweaver.formats import Trajectory, TrajectoryError, load_trajectory
from contextweaver.formats.base import Reader
from contextweaver.models import ModelError, build_model
from contextweaver.nodes.graph import DependencyGraph
from contextweaver.protocols import (
    Analyzer,
    Annotator,
    Model,
    Selector,
    Strategy,
    Summarizer,
)
from contextweaver.records import (
    Decision,
    Node,
    Parent,
    Step,
    TestStatus,
    ValidationStatus,
    WovenContext,
)
from contextweaver.store import Session, Store, StoreError, open_store
from contextweaver.strategies import TABLE as STRATEGIES
from contextweaver.strategies import build_strategy, strategy_names
from contextweaver.weaver import ContextWeaver
from contextweaver.weaving.budget import BudgetError
from contextweaver.weaving.plan import Plan

__version__ = "0.2.0"

__all__ = [
    "STRATEGIES",
    "Analyzer",
    "Annotator",
    "BudgetError",
    "ContextWeaver",
    "ContextWeaverError",
    "Decision",
    "DependencyGraph",
    "Model",
    "ModelConfig",
    "ModelError",
    "Node",
    "Parent",
    "Plan",
    "Reader",
    "Selector",
    "Session",
    "Step",
    "Store",
    "StoreError",
    "Strategy",
    "Summarizer",
    "TestStatus",
    "Trajectory",
    "TrajectoryError",
    "ValidationStatus",
    "WeaverConfig",
    "WovenContext",
    "__version__",
    "build_model",
    "build_strategy",
    "load_config",
    "load_trajectory",
    "open_store",
    "strategy_names",
]
