"""samples/python/multidoc_qa_agent.py with two planted mistakes that `contractstudio check` reports (read, never imported):

- `act`'s input parameter is named `request`: SymbolicAI calls act with `input=` and refuses the class (PYC103);
- `remedy_retry_params` says `max_dalay`: SymbolicAI ignores it, our decorator refuses it (SCH102 error, "did you mean 'max_delay'?").

    contractstudio check samples/broken/multidoc_qa_agent_broken.py
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import Field

from contractstudio.symbolic import Expression, LLMDataModel, contract


class Document(LLMDataModel):
    """One document of the corpus."""

    id: str = Field(description="Unique identifier of the document.")
    content: str = Field(description="The full text of the document.")


class DocSnippet(LLMDataModel):
    """A passage quoted verbatim from a document, with the document's id so the answer can cite it."""

    doc_id: str = Field(description="ID of the document the snippet comes from.")
    snippet: str = Field(description="A short excerpt supporting the answer.")


class MultiDocQAInput(LLMDataModel):
    """A question, the documents it may be answered from, and how many snippets may be cited."""

    query: str = Field(description="The user's question in plain English.")
    documents: list[Document] = Field(description="The corpus to answer from.")
    max_snippets: int | None = Field(default=3, ge=1, le=10, description="The most snippets the answer may cite.")


class IntermediateRetrieved(LLMDataModel):
    """What act retrieves: the sentences the model reads instead of whole documents."""

    query: str = Field(description="The question.")
    top_docs: list[Document] = Field(description="The documents that share the most words with the question.")
    selected_sentences: list[str] = Field(description="The sentences most relevant to the question.")
    target_snippet_count: int = Field(description="The most snippets the answer may cite.")


class AnswerWithEvidence(LLMDataModel):
    """The answer returned to the caller, checked by post."""

    answer: str = Field(description="A concise answer that stands on its own.")
    evidence: list[DocSnippet] = Field(description="The passages the answer cites.")
    coverage_score: float = Field(ge=0.0, le=1.0, description="How much of the answer the evidence supports (0 to 1).")


def _overlap(text: str, terms: set[str]) -> int:
    return sum(word in terms for word in text.lower().split())


@contract(
    pre_remedy=False,
    post_remedy=True,
    accumulate_errors=True,
    remedy_retry_params=dict(tries=3, delay=0.4, max_dalay=4.0, jitter=0.15, backoff=1.8, graceful=False),
)
class MultiDocQAgent(Expression):
    """Answers a question from a few documents, citing the passages it uses."""

    def __init__(self, min_coverage: float = 0.55, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.min_coverage = min_coverage
        self.interaction_log: list[dict[str, Any]] = []  # act's history: it persists across calls

    @property
    def prompt(self) -> str:
        return ("You are a research assistant. Given a question and the relevant sentences, write a concise answer. "
                "Cite every passage you use as evidence, quoted from its document.")

    def pre(self, input: MultiDocQAInput) -> bool:
        if not input.query.strip():
            raise ValueError("The query must not be empty.")
        if not input.documents:
            raise ValueError("Supply at least one document.")
        return True

    def act(self, request: MultiDocQAInput, **kwargs: Any) -> IntermediateRetrieved:
        terms = {t.lower() for t in request.query.split()}
        ranked = sorted(request.documents, key=lambda d: _overlap(d.content, terms), reverse=True)[:3]
        sentences: list[str] = []
        for doc in ranked:
            parts = [s.strip() for s in doc.content.split(".") if s.strip()]
            sentences += sorted(parts, key=lambda s: _overlap(s, terms), reverse=True)[:2]
        self.interaction_log.append({"query": request.query, "top_doc_ids": [d.id for d in ranked]})
        return IntermediateRetrieved(query=request.query, top_docs=ranked, selected_sentences=sentences,
                                     target_snippet_count=request.max_snippets or 3)

    def post(self, output: AnswerWithEvidence) -> bool:
        if not output.answer.strip():
            raise ValueError("The answer is empty.")
        if output.coverage_score < self.min_coverage:
            raise ValueError(f"Coverage score {output.coverage_score:.2f} is below the minimum {self.min_coverage:.2f}.")
        if output.coverage_score >= 0.8 and not output.evidence:
            raise ValueError("A high coverage score needs at least one evidence snippet.")
        return True

    def forward(self, input: MultiDocQAInput, **kwargs: Any) -> AnswerWithEvidence:
        if self.contract_successful and self.contract_result is not None:
            return self.contract_result
        first = input.documents[0]
        return AnswerWithEvidence(answer="I am not confident enough to answer; rephrase the question or add documents.",
                                  evidence=[DocSnippet(doc_id=first.id, snippet=first.content.split(".")[0][:300])],
                                  coverage_score=0.0)


DOCUMENTS = [
    Document(id="A1", content="Symbolic AI combines formal logic with machine learning. It keeps reasoning transparent."),
    Document(id="B2", content="Vector databases store embeddings of documents. They retrieve text similar to a query vector."),
    Document(id="C3", content="Hybrid search merges keyword search and dense vectors. It improves recall on domain collections."),
]
QUESTION = MultiDocQAInput(query="Why are vector databases useful for semantic search?", documents=DOCUMENTS, max_snippets=2)

# What a model might answer: first too little coverage (post rejects it), then a cited answer.
SCRIPTED_REPLIES = [
    '{"answer": "They are fast.", "evidence": [], "coverage_score": 0.3}',
    '{"answer": "They store embeddings and retrieve text similar to a query vector.", '
    '"evidence": [{"doc_id": "B2", "snippet": "They retrieve text similar to a query vector"}], "coverage_score": 0.9}',
]


def main(argv: list[str]) -> int:
    """Answer the sample question offline and print the answer, the remedies and the perf stats."""
    import contractstudio as cs
    from contractstudio.symbolic import use_model

    agent = MultiDocQAgent(min_coverage=0.6)
    with use_model(cs.ScriptedModel(SCRIPTED_REPLIES), wait=False, trace=argv[0] if argv else None):
        result = agent(input=QUESTION)
    print("answer:", result.answer)
    print("evidence:", ", ".join(f"({e.doc_id}) {e.snippet}" for e in result.evidence))
    print("successful:", agent.contract_successful, "| model calls:", len(agent.contract_trace.of_type("llm_request")))
    stats = agent.contract_perf_stats()
    for key in ("input_validation", "act_execution", "output_validation", "forward_execution", "overhead"):
        print(f"{key:<18} {stats[key]['count']:>3} {stats[key]['percentage']:6.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
