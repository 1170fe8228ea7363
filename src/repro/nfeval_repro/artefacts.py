"""The artefact catalogue: paper item -> notebook -> outputs. The one list of artefacts.

One entry per notebook. The Makefile's artefact rules are generated from it
(``python -m nfeval_repro.artefacts --make``, included by the Makefile), so is the
README's artefact table (``make readme``), and the notebook tests execute
every entry with its smallest parameters.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from dataclasses import dataclass

from nfeval_repro.paths import NOTEBOOKS
from nfeval.models.registry import DEFAULT_JUDGE


@dataclass(frozen=True)
class Artefact:
    id: str
    paper: str  # "linkage" | "debateqa" | "both"
    item: str  # the paper's table / figure / equation
    notebook: str  # file name under notebooks/
    figure: bool = False  # writes figures/<id>.png
    status: str = ""  # one phrase: where its evidence stands (the README's table)
    after: tuple[str, ...] = ()  # artefacts whose outputs (or item store) it reads
    inputs: tuple[str, ...] = ()  # project data it reads: "sample", "docs"
    #: notebook parameters that make the notebook this artefact (one notebook, two artefacts)
    parameters: tuple[tuple[str, str], ...] = ()

    @property
    def path(self):
        return NOTEBOOKS / self.notebook

    @property
    def executed(self) -> str:
        """File name of its executed copy (``results/executed/``)."""
        return f"{self.id}.ipynb" if self.parameters else self.notebook

    @property
    def target(self) -> str:
        return f"results/{self.id}.csv"

    @property
    def module(self) -> str | None:
        """Dotted name of the experiment module whose ``run`` makes it: the longest
        ``nfeval_repro.<paper>.<prefix of the notebook's name>`` that exists (None: claims,
        which reads committed tables only)."""
        paper = {"lk": "linkage", "dq": "debateqa"}.get(self.id[:2])
        stem = self.notebook.removesuffix(".ipynb")
        while paper and stem:
            if importlib.util.find_spec(f"nfeval_repro.{paper}.{stem}"):
                return f"nfeval_repro.{paper}.{stem}"
            stem = stem.rpartition("_")[0]
        return None

    @property
    def config(self):
        """The frozen config its notebook runs with: the module's ``Config`` with this entry's
        ``parameters`` (None for claims). ``run(artefact.config)`` computes the artefact."""
        module = self.module  # searched for on every access: once here
        if module is None:
            return None
        from nfeval_repro.parameters import check

        config = importlib.import_module(module).Config(**dict(self.parameters))
        check(config)
        return config


#: lk_t03 / lk_t04 as committed: the 1.5B model writing the reference lists and judging, at the
#: `limit` of each artefact's last finished make evidence stage (the notebook's defaults name the
#: same models through the profile; the catalogue names them so the record does too).
_LK_T03_T04 = (("judge", DEFAULT_JUDGE),
               ("generator", "llama:qwen2.5-coder-1.5b-instruct"),
               ("degraders", "llama:qwen2.5-coder-1.5b-instruct"), ("max_candidates", -1))

ARTEFACTS: tuple[Artefact, ...] = (
    Artefact("lk_t01", "linkage", "Table 1: dataset statistics (answers per grade)",
             "lk_t01_dataset_stats.ipynb", figure=True,
             status="equals the paper: all 12 counts"),
    Artefact("lk_t02", "linkage", "Table 2: correlation with human grades",
             "lk_t02_correlations.ipynb", figure=True,
             status="n = 345 / 53, every candidate: LINKAGE 0-shot beats pairwise; vs pointwise "
                    "without references behind on ANTIQUE, ahead on TREC-DL-NF"),
    Artefact("lk_t05", "linkage", "Table 5: WebGLM Acc(best) and Acc(best+worst)",
             "lk_t05_webglm.ipynb", figure=True,
             status="n = 100, 1.5B judge: LINKAGE at chance, behind the release's pairwise "
                    "in Acc(best+worst)"),
    Artefact("lk_t09_t10_f02", "linkage", "Tables 9-10, Fig. 2: reference draws",
             "lk_t09_t10_f02_reference_draws.ipynb", figure=True,
             status="n = 30: no draw told apart from the first",
             after=('lk_t02',)),
    Artefact("lk_f03", "linkage", "Figure 3: case study on one question",
             "lk_f03_case_study.ipynb", figure=True,
             status="one question, a case study (no interval)",
             after=('lk_t02',)),
    Artefact("dq_eq7", "debateqa", "Equation 7: probability ratio implied by a P.D. change",
             "dq_eq7_pd_probability_ratio.ipynb", figure=True,
             status="equals the paper's closed form"),
    Artefact("dq_t03", "debateqa", "Table 3: D.A. against labels",
             "dq_t03_da_validity.ipynb", figure=True,
             status="1.5B judge AUROC 0.865 (n = 160 answers)",
             inputs=('sample',)),
    Artefact("dq_t04", "debateqa", "Table 4: P.D. and D.A. of systems",
             "dq_t04_main_results.ipynb", figure=True,
             status="n = 40: P.D. orders the written sets on 38-39 of 40 questions; the 1.5B "
                    "judge cannot tell balanced from one-sided",
             inputs=('sample',)),
    Artefact("dq_f03", "debateqa", "Figure 3: P.D. ranking stability across backbones",
             "dq_f03_pd_backbone_stability.ipynb", figure=True,
             status="n = 40: five model systems; within a question every backbone pair above 0, "
                    "rankings too wide to tell",
             after=('dq_t04',)),
    Artefact("dq_f04", "debateqa", "Figure 4: P.D. ranking stability across restate prompts",
             "dq_f04_pd_restate_stability.ipynb", figure=True,
             status="n = 40: restate prompts rank five systems alike (tau 0.8-1.0; within a "
                    "question 0.76-0.90)",
             after=('dq_t04',)),
    Artefact("dq_f05", "debateqa", "Figure 5: D.A. agreement across judges",
             "dq_f05_da_judge_agreement.ipynb", figure=True,
             status="n = 40: the judges do not agree; the 1.5B and SmolLM2 judges' scores track "
                    "the rule",
             after=('dq_t04',)),
    Artefact("dq_f06", "debateqa", "Figure 6: P.D. vs D.A. over systems",
             "dq_f06_pd_vs_da.ipynb", figure=True,
             status="n = 40: Spearman -0.75 over all systems, carried by the written sets; "
                    "cannot tell for the three models",
             after=('dq_t04',)),
    Artefact("dq_f07", "debateqa", "Figure 7: ranking by k * Z(P.D.) + Z(D.A.)",
             "dq_f07_combined_ranking.ipynb", figure=True,
             status="n = 40: balanced first, off-topic last; SmolLM2 above Qwen for k <= 2, the "
                    "models overlap at k = 4 and 8",
             after=('dq_t04',)),
    Artefact("dq_t05", "debateqa", "Table 5: system prompts",
             "dq_t05_system_prompts.ipynb", figure=True,
             status="n = 40: D.A. up under p_detailed for all three models; p_comprehensive "
                    "does not improve every model",
             after=('dq_t04',)),
    Artefact("dq_f08_f09", "debateqa", "Figures 8-9: temperature, top-p",
             "dq_f08_f09_sampling_sweeps.ipynb", figure=True,
             status="n = 40: P.D. and D.A. worse at temperature / top-p 1.0, the paper's "
                    "opposite",
             inputs=('sample',)),
    Artefact("dq_f10", "debateqa", "Figure 10: metrics vs actual answer length",
             "dq_f10_answer_length.ipynb", figure=True,
             status="n = 40: answers lengthen, P.D. and D.A. do not follow",
             inputs=('sample',)),
    Artefact("lk_t03", "linkage", "Table 3: single ground truth (1GT), generated references",
             "lk_t03_t04_reference_settings.ipynb", figure=True,
             parameters=(("artefact", "lk_t03"), ("limit", 40), *_LK_T03_T04[:-1],
                         ("max_candidates", 0), ("judge_dtype", "bfloat16"),
                         ("judge_rows", "pointwise-ref,pairwise-release,linkage-0shot,"
                                        "linkage-fewshot")),
             status="n = 40, every candidate: 0-shot beats pairwise as released on TREC-DL-NF "
                    "only; vs pointwise with references cannot tell"),
    Artefact("lk_t04", "linkage", "Table 4: no ground truth (0GT), generated references",
             "lk_t03_t04_reference_settings.ipynb", figure=True,
             parameters=(("artefact", "lk_t04"), ("limit", 40), *_LK_T03_T04[:-1],
                         ("max_candidates", 0), ("judge_dtype", "bfloat16")),
             status="n = 40, every candidate: pointwise wins on both datasets",
             after=('lk_t03',)),
    Artefact("lk_t06", "linkage", "Table 6: reference-list length and grade composition",
             "lk_t06_reference_composition.ipynb", figure=True,
             status="n = 30: no pattern beats the default; 3-shot not above 0-shot"),
    Artefact("lk_t07_t08", "linkage", "Tables 7-8: LINKAGE with n = 0, 1, 3, 5 demonstrations",
             "lk_t07_t08_fewshot.ipynb", figure=True,
             status="n = 30: no n-shot above 0-shot; the paper's 1-shot gain not reproduced",
             after=('lk_t06',)),
    Artefact("dq_t02", "debateqa", "Table 2: metric alignment with human grades",
             "dq_t02_metric_alignment.ipynb", figure=True,
             status="same 1.5B backbone, n = 403-430 / 31-43: behind 2 of 3 on ANTIQUE, beats 2 "
                    "of 3 on TREC-DL-NF; SmolLM2 P.D.: behind all 3 on ANTIQUE"),
    Artefact("dq_f02", "debateqa", "Figure 2: pseudo-annotator agreement",
             "dq_f02_annotator_agreement.ipynb", figure=True,
             status="pseudo-annotators from the graded releases"),
    Artefact("dq_t08_t09", "debateqa", "Tables 8-9: question sources before and after dedup",
             "dq_t08_t09_question_sources.ipynb", figure=True,
             status="our question sets: exact counts",
             inputs=('sample',)),
    Artefact("dq_t10", "debateqa", "Table 10: trusted TLDs and the filter on the collection",
             "dq_t10_trusted_tlds.ipynb", figure=True,
             status="our collection: exact counts",
             inputs=('sample', 'docs')),
    Artefact("dq_f11", "debateqa", "Figure 11: question-to-chunk cosine similarity",
             "dq_f11_chunk_similarity.ipynb", figure=True,
             status="our collection",
             inputs=('sample', 'docs')),
    Artefact("dq_f01", "debateqa", "Figure 1: curation pipeline funnel",
             "dq_f01_curation_pipeline.ipynb", figure=True,
             status="our collection, one pipeline run",
             inputs=('sample', 'docs')),
    Artefact("dq_f12_f13", "debateqa", "Figures 12-13: documents and POVs per question",
             "dq_f12_f13_docs_povs_per_question.ipynb", figure=True,
             status="our collection",
             after=('dq_f01',)),
    Artefact("dq_t01", "debateqa", "Table 1: one dataset entry (question, POVs, truncated explanations)",
             "dq_t01_dataset_entry.ipynb",
             status="one entry of the sample",
             inputs=('sample',)),
    Artefact("dq_f14", "debateqa", "Figure 14: topic distribution of the questions (BERTopic)",
             "dq_f14_topics.ipynb", figure=True,
             status="the sample's 40 questions",
             inputs=('sample',)),
    Artefact("dq_t06", "debateqa", "Table 6: no retrieval vs vanilla RAG vs ReAct (P.D., D.A.)",
             "dq_t06_rag.ipynb", figure=True,
             status="n = 40: retrieval shortens answers, lowers P.D. (better) and D.A.",
             after=('dq_t04',),
             inputs=('docs',)),
    Artefact("dq_t07", "debateqa", "Table 7: vanilla RAG on all vs trusted-TLD documents",
             "dq_t07_rag_trusted.ipynb", figure=True,
             status="n = 40: trusted sources: cannot tell",
             after=('dq_t06',)),
    Artefact("lk_x01", "linkage", "beyond the paper: a combined evaluator chosen on some "
             "questions, judged on others", "lk_x01_combined_evaluator.ipynb", figure=True,
             status="n = 345 / 53, out of sample: a combination beats the best single method",
             after=('lk_t02',)),
    Artefact("lk_x02", "linkage", "beyond the paper: the pairwise judge's position bias (why "
             "pairwise sits at chance)", "lk_x02_pairwise_position_bias.ipynb", figure=True,
             status="n = 120 / 53: the judge prefers the first answer in over 9 of 10 pairs",
             after=('lk_t02',)),
    Artefact("lk_x03", "linkage", "beyond both papers: one sentence addressed to the judge "
             "(LINKAGE's judges, D.A., P.D.; the guard and the flag)",
             "lk_x03_judge_manipulation.ipynb", figure=True,
             status="n = 10 per dataset (every judge row), 40 DebateQA answers: --guard "
                    "(strip) leaves the instruction and the fake verdict no gain; nothing stops "
                    "self-praise"),
    Artefact("lk_x04", "linkage", "beyond both papers: a screen against manipulation "
             "families it was never shown (8 families, 80 wordings with controls; held out)",
             "lk_x04_screen_heldout.ipynb", figure=True,
             status="6 held-out families: what each signal flags, on every real answer of "
                    "the evaluation questions"),
    Artefact("lk_x05", "linkage", "beyond the paper: does a LINKAGE verdict depend on the "
             "judge's size? (L1/L2 rows with a smaller judge on lk_t02's every-candidate draw)",
             "lk_x05_judge_size.ipynb", figure=True,
             status="20 ANTIQUE and 10 TREC-DL-NF questions, every candidate: SmolLM2-135M, "
                    "Gemma-3-270m and the 0.5B judge beside the 1.5B one; L1 moves toward the "
                    "paper from each to 1.5B on TREC-DL-NF, from 2 of 3 on ANTIQUE, where size "
                    "does not order the judges",
             after=('lk_t02',)),
    Artefact("lk_x06", "linkage", "beyond both papers: what --guard screen costs in agreement "
             "with human grades (lk_t02's every-candidate draw, changed answers rejudged)",
             "lk_x06_guard_cost.ipynb", figure=True,
             status="every claim row on 345 / 53 questions: guard minus off",
             after=('lk_t02',)),
    Artefact("lk_x07", "linkage", "beyond both papers: what each held-out manipulation "
             "family does to the judges, with and without --guard screen",
             "lk_x07_manipulation_families.ipynb", figure=True,
             status="6 held-out families x 10 wordings: 2 questions per LINKAGE dataset, "
                    "4 DebateQA answers"),
    Artefact("claims", "both", "The central claims, decided from the tables",
             "claims.ipynb", figure=True,
             status="generated from the tables above",
             after=('lk_t02', 'lk_t03', 'lk_t04', 'lk_t05', 'dq_t02', 'dq_t03', 'dq_f03', 'dq_f04',
                    'lk_x01')),
)


#: Make variables of the project data an artefact reads (``inputs``).
INPUTS = {"sample": "$(DQ_SAMPLE)", "docs": "$(DQ_DOCS)"}


def make_rules() -> str:
    """The Makefile's artefact rules: one file target per artefact, after its inputs."""
    out = ["# Generated from src/repro/nfeval_repro/artefacts.py by `python -m nfeval_repro.artefacts --make`;",
           "# do not edit.", "",
           "# a comma inside $(call ...)'s arguments would split them: parameters spell it $(comma)",
           "comma := ,", "",
           "ARTEFACTS := " + " ".join(a.target for a in ARTEFACTS), ""]
    for a in ARTEFACTS:
        deps = [f"notebooks/{a.notebook}", "$(SRC)", *(by_id(d).target for d in a.after),
                *(INPUTS[i] for i in a.inputs)]
        label = {"linkage": "LINKAGE", "debateqa": "DebateQA", "both": "Both papers"}[a.paper]
        for k, v in a.parameters:
            if not str(v) or any(c in str(v) for c in " \t\n$#()'\""):
                raise ValueError(f"{a.id}: parameter {k}={v!r} cannot pass through make's "
                                 "command line (empty, or a space, $, #, bracket or quote)")
        args = " ".join(f"-p {k} {str(v).replace(',', '$(comma)')}" for k, v in a.parameters)
        out += [f"{a.target}: {' '.join(deps)} | $(STAMP) ## {label} {a.item}",
                f"\t$(call run_notebook,$<,{a.executed},{args})", ""]
    return "\n".join(out)


def parameter_cell(notebook: str) -> tuple[dict, int]:
    """The notebook's JSON and the index of its parameters cell."""
    nb = json.loads((NOTEBOOKS / notebook).read_text(encoding="utf-8"))
    (index,) = [i for i, c in enumerate(nb["cells"])
                if "parameters" in c["metadata"].get("tags", [])]
    return nb, index


def write_parameter_cells() -> list[str]:
    """Rewrite each notebook's parameters cell from its module's ``Config``
    (:func:`nfeval_repro.parameters.cell`); the notebooks changed."""
    from nfeval_repro.parameters import cell

    changed = []
    for notebook in dict.fromkeys(a.notebook for a in ARTEFACTS):
        module = by_notebook(notebook).module
        if module is None:
            continue
        nb, index = parameter_cell(notebook)
        text = cell(importlib.import_module(module).Config)
        if "".join(nb["cells"][index]["source"]) != text:
            nb["cells"][index]["source"] = text.splitlines(keepends=True)
            (NOTEBOOKS / notebook).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n",
                                              encoding="utf-8")
            changed.append(notebook)
    return changed


def readme_table() -> str:
    """The artefact table of docs/artefacts.md: id (linked to its notebook), paper item,
    one-phrase status, details (links relative to docs/)."""
    docs = {"linkage": "results/linkage.md", "debateqa": "results/debateqa.md"}
    lines = ["| id (notebook) | paper item | status | |", "|---|---|---|---|"]
    for a in ARTEFACTS:
        paper = {"linkage": "LINKAGE ", "debateqa": "DebateQA ", "both": ""}[a.paper]
        more = (f"[reading]({docs[a.paper]}#{a.id})" if a.paper in docs
                else "[table](claims.md)")
        lines.append(f"| [`{a.id}`](../notebooks/{a.notebook}) | {paper}{a.item} | {a.status} "
                     f"| {more} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m nfeval_repro.artefacts", description=__doc__)
    ap.add_argument("--make", action="store_true", help="print the Makefile's artefact rules")
    ap.add_argument("--parameters", action="store_true",
                    help="rewrite every notebook's parameters cell from its experiment's Config "
                         "(the fields, their defaults and comments) and list the notebooks changed")
    args = ap.parse_args(argv)
    if args.make:
        print(make_rules())
    elif args.parameters:
        for notebook in write_parameter_cells():
            print(f"notebooks/{notebook}: parameters cell rewritten")
    else:
        for a in ARTEFACTS:
            print(f"{a.id:<16} {a.target:<28} notebooks/{a.notebook}  ({a.item})")
    return 0


def by_notebook(notebook: str) -> Artefact:
    """The first artefact its notebook makes."""
    return next(a for a in ARTEFACTS if a.notebook == notebook)


def by_id(artefact_id: str) -> Artefact:
    for a in ARTEFACTS:
        if a.id == artefact_id:
            return a
    raise KeyError(artefact_id)


if __name__ == "__main__":
    import sys

    sys.exit(main())
