"""The validation layer (SPEC section 5): test-runner parsers, node labels, supersession, TEST STATUS."""

from contextweaver.validation.detector import ValidationDetector
from contextweaver.validation.observation import parse_observation
from contextweaver.validation.registry import PARSERS
from contextweaver.validation.report import TestReport
from contextweaver.validation.tracker import TestTracker, Verdict

__all__ = ["PARSERS", "TestReport", "TestTracker", "ValidationDetector", "Verdict", "parse_observation"]
