"""The artefact catalogue: paper item -> notebook -> outputs.

One entry per notebook. The Makefile has one file target per entry, the
notebook tests execute every entry with its smallest parameters, and the
README's artefact table lists the same rows (a test keeps them in sync).
"""

from __future__ import annotations

from dataclasses import dataclass

from nfeval.paths import NOTEBOOKS


@dataclass(frozen=True)
class Artefact:
    id: str
    paper: str  # "linkage" | "debateqa" | "both"
    item: str  # the paper's table / figure / equation
    notebook: str  # file name under notebooks/
    figure: bool = False  # writes figures/<id>.png

    @property
    def path(self):
        return NOTEBOOKS / self.notebook

    @property
    def target(self) -> str:
        return f"results/{self.id}.csv"


ARTEFACTS: tuple[Artefact, ...] = (
    Artefact("lk_t01", "linkage", "Table 1: dataset statistics (answers per grade)",
             "lk_t01_dataset_stats.ipynb", figure=True),
    Artefact("lk_t02", "linkage", "Table 2: correlation with human grades, every evaluator",
             "lk_t02_correlations.ipynb", figure=True),
    Artefact("lk_t05", "linkage", "Table 5: WebGLM Acc(best) and Acc(best+worst)",
             "lk_t05_webglm.ipynb", figure=True),
    Artefact("lk_t09_t10_f02", "linkage", "Tables 9-10, Figure 2: three reference draws",
             "lk_t09_t10_f02_reference_draws.ipynb", figure=True),
    Artefact("lk_f03", "linkage", "Figure 3: case study, every method on one question (0-10)",
             "lk_f03_case_study.ipynb", figure=True),
    Artefact("dq_eq7", "debateqa", "Equation 7: probability ratio implied by a P.D. change",
             "dq_eq7_pd_probability_ratio.ipynb", figure=True),
    Artefact("dq_t03", "debateqa", "Table 3: D.A., D.A.-ZS and Acknowledge against labels",
             "dq_t03_da_validity.ipynb", figure=True),
    Artefact("dq_t04", "debateqa", "Table 4: P.D. and D.A. of answering systems, normalized rank",
             "dq_t04_main_results.ipynb", figure=True),
    Artefact("dq_f03", "debateqa", "Figure 3: P.D. ranking stability across backbones",
             "dq_f03_pd_backbone_stability.ipynb", figure=True),
    Artefact("dq_f04", "debateqa", "Figure 4: P.D. ranking stability across restate prompts",
             "dq_f04_pd_restate_stability.ipynb", figure=True),
    Artefact("dq_f05", "debateqa", "Figure 5: D.A. agreement across judges",
             "dq_f05_da_judge_agreement.ipynb", figure=True),
    Artefact("dq_f06", "debateqa", "Figure 6: P.D. vs D.A. over systems",
             "dq_f06_pd_vs_da.ipynb", figure=True),
    Artefact("dq_f07", "debateqa", "Figure 7: ranking by k * Z(P.D.) + Z(D.A.)",
             "dq_f07_combined_ranking.ipynb", figure=True),
    Artefact("dq_t05", "debateqa", "Table 5: system prompts basic / comprehensive / detailed",
             "dq_t05_system_prompts.ipynb", figure=True),
    Artefact("dq_f08_f09", "debateqa", "Figures 8-9: P.D. and D.A. vs temperature and top-p",
             "dq_f08_f09_sampling_sweeps.ipynb", figure=True),
    Artefact("dq_f10", "debateqa", "Figure 10: metrics vs actual answer length",
             "dq_f10_answer_length.ipynb", figure=True),
    Artefact("lk_t03", "linkage", "Table 3: single ground truth (1GT), generated references",
             "lk_t03_single_ground_truth.ipynb", figure=True),
    Artefact("lk_t04", "linkage", "Table 4: no ground truth (0GT), generated references",
             "lk_t04_no_ground_truth.ipynb", figure=True),
    Artefact("lk_t06", "linkage", "Table 6: reference-list length and grade composition",
             "lk_t06_reference_composition.ipynb", figure=True),
    Artefact("lk_t07_t08", "linkage", "Tables 7-8: LINKAGE with n = 0, 1, 3, 5 demonstrations",
             "lk_t07_t08_fewshot.ipynb", figure=True),
    Artefact("dq_t02", "debateqa", "Table 2: metric alignment with human judgement (ANTIQUE / TREC-DL-NF grades)",
             "dq_t02_metric_alignment.ipynb", figure=True),
    Artefact("dq_f02", "debateqa", "Figure 2: agreement of pseudo-annotators (disjoint parts of the grades)",
             "dq_f02_annotator_agreement.ipynb", figure=True),
    Artefact("dq_t08_t09", "debateqa", "Tables 8-9: question sources before and after dedup",
             "dq_t08_t09_question_sources.ipynb", figure=True),
    Artefact("dq_t10", "debateqa", "Table 10: trusted TLDs and the filter on the collection",
             "dq_t10_trusted_tlds.ipynb", figure=True),
    Artefact("dq_f11", "debateqa", "Figure 11: question-to-chunk cosine similarity",
             "dq_f11_chunk_similarity.ipynb", figure=True),
    Artefact("dq_f01", "debateqa", "Figure 1: curation pipeline funnel",
             "dq_f01_curation_pipeline.ipynb", figure=True),
    Artefact("dq_f12_f13", "debateqa", "Figures 12-13: documents and POVs per question",
             "dq_f12_f13_docs_povs_per_question.ipynb", figure=True),
    Artefact("dq_t01", "debateqa", "Table 1: one dataset entry (question, POVs, truncated explanations)",
             "dq_t01_dataset_entry.ipynb"),
    Artefact("dq_f14", "debateqa", "Figure 14: topic distribution of the questions (BERTopic)",
             "dq_f14_topics.ipynb", figure=True),
    Artefact("dq_t06", "debateqa", "Table 6: no retrieval vs vanilla RAG vs ReAct (P.D., D.A.)",
             "dq_t06_rag.ipynb", figure=True),
    Artefact("dq_t07", "debateqa", "Table 7: vanilla RAG on all vs trusted-TLD documents",
             "dq_t07_rag_trusted.ipynb", figure=True),
    Artefact("claims", "both", "The central claims of both papers, decided from the tables above",
             "claims.ipynb", figure=True),
)


def by_id(artefact_id: str) -> Artefact:
    for a in ARTEFACTS:
        if a.id == artefact_id:
            return a
    raise KeyError(artefact_id)
