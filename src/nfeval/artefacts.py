"""The artefact catalogue: paper item -> notebook -> outputs.

One entry per notebook. The Makefile has one file target per entry, the
notebook tests execute every entry with its smallest parameters, and the
README's artefact table lists the same rows (a test keeps them in sync).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nfeval.paths import NOTEBOOKS


@dataclass(frozen=True)
class Artefact:
    id: str
    paper: str  # "linkage" | "debateqa"
    item: str  # the paper's table / figure / equation
    notebook: str  # file name under notebooks/
    figure: bool = False  # writes figures/<id>.png
    test_parameters: dict = field(default_factory=dict)  # smallest parameters, for the tests

    @property
    def path(self):
        return NOTEBOOKS / self.notebook

    @property
    def target(self) -> str:
        return f"results/{self.id}.csv"


ARTEFACTS: tuple[Artefact, ...] = (
    Artefact("lk_t01", "linkage", "Table 1: dataset statistics (answers per grade)",
             "lk_t01_dataset_stats.ipynb", figure=True, test_parameters={"limit": 5}),
    Artefact("dq_eq7", "debateqa", "Equation 7: probability ratio implied by a P.D. change",
             "dq_eq7_pd_probability_ratio.ipynb", figure=True),
    Artefact("dq_t03", "debateqa", "Table 3: D.A., D.A.-ZS and Acknowledge against labels",
             "dq_t03_da_validity.ipynb", figure=True,
             test_parameters={"limit": 1, "judge": "smollm2-135m-instruct"}),
)


def by_id(artefact_id: str) -> Artefact:
    for a in ARTEFACTS:
        if a.id == artefact_id:
            return a
    raise KeyError(artefact_id)
