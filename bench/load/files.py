"""The generated files the clients upload, each carrying a distinctive word."""

from __future__ import annotations

import random
from typing import NamedTuple

from tests.integration.documents.conftest import make_pdf

#: Vocabulary of the generated files and of the searches that are not for a distinctive word.
WORDS = (
    *("membrane", "protein", "kinase", "receptor", "signalling", "pathway", "enzyme", "genome"),
    *("mutation", "phenotype", "cohort", "trial", "placebo", "dosage", "outcome", "survival"),
    *("regression", "variance", "estimator", "sampling", "neuron", "synapse", "cortex"),
    *("climate", "ocean", "carbon", "nitrogen", "soil", "erosion", "glacier", "sediment"),
    *("turbine", "voltage", "circuit", "antenna", "signal", "memory", "learning"),
)


class UploadedFile(NamedTuple):
    document_id: str
    filename: str
    content_type: str
    data: bytes
    owner: int = 0
    """Index of the uploading user's token."""


def distinctive_word(client: int, number: int) -> str:
    return f"loadmark{client:03d}x{number:04d}"


def generated_file(rng: random.Random, client: int, number: int, pdf_every: int) -> UploadedFile:
    """A small file whose text carries a word found in no other upload; varied kind and size."""
    mark = distinctive_word(client, number)
    paragraphs = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60)))
        for _ in range(rng.randint(1, 12))
    ]
    paragraphs.insert(rng.randrange(len(paragraphs) + 1), f"The {mark} sample {rng.random():.6f}.")
    if (client + number) % pdf_every == 0:
        pages = [" ".join(paragraphs[i::2]) for i in range(min(2, len(paragraphs)))]
        return UploadedFile("", f"{mark}.pdf", "application/pdf", make_pdf(pages))
    if rng.random() < 0.5:
        body = f"# Report {mark}\n\n" + "\n\n".join(
            f"## Part {n}\n\n{text}" for n, text in enumerate(paragraphs, 1)
        )
        return UploadedFile("", f"{mark}.md", "text/markdown", body.encode())
    return UploadedFile("", f"{mark}.txt", "text/plain", "\n\n".join(paragraphs).encode())
