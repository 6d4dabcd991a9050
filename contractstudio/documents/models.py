"""Pydantic models of the four document kinds of FORMAT.md, in one namespace.

The base and the shared parts are in base.py; each kind has its module (contract_model.py,
agent_model.py, pipeline_model.py, tools_model.py). Import from here.
"""

from __future__ import annotations

from contractstudio.documents.agent_model import (  # noqa: F401
    Agent,
    AgentTool,
    Backend,
    Constraints,
    Corpus,
    Ensemble,
    LatencyEstimate,
    OutputSchema,
    Policy,
    Task,
    TokenEstimate,
    ToolRef,
    TrajectoryStep,
)
from contractstudio.documents.base import (  # noqa: F401
    Condition,
    FieldSpec,
    Model,
    Path,
    SrcDict,
    TypeDecl,
)
from contractstudio.documents.contract_model import (  # noqa: F401
    STAGE_NAMES,
    Act,
    Contract,
    Example,
    Expect,
    ExpectPerf,
    LLMSettings,
    Remedy,
    Retry,
    Scenario,
)
from contractstudio.documents.decorator_model import PythonContract
from contractstudio.documents.pipeline_model import (  # noqa: F401
    ActionContract,
    Pipeline,
    Router,
    Step,
)
from contractstudio.documents.tools_model import (  # noqa: F401
    ToolDecl,
    ToolSet,
)

Document = Contract | Agent | Pipeline | ToolSet
KINDS: dict[str, type[Model]] = {"contract": Contract, "agent": Agent, "pipeline": Pipeline, "tools": ToolSet}
# A dialect whose documents carry settings of their own: its kind's model (the key is the document's dialect, kind).
DIALECT_KINDS: dict[tuple[str, str], type[Model]] = {("symbolicai", "contract"): PythonContract}
