"""A small corpus for search quality: notes on distinct topics and paraphrase queries that share
no word with their target (SPEC §16 quality tests)."""

from __future__ import annotations

NOTES: dict[str, tuple[str, str]] = {
    "k8s": (
        "Kubernetes node maintenance",
        "Drain each worker with kubectl drain, cordon it, upgrade kubelet, then uncordon. "
        "Check pods reschedule and the control plane stays healthy.",
    ),
    "bread": (
        "Sourdough recipe",
        "Feed the starter the night before. Mix flour, water and salt, fold every half hour, "
        "shape the dough and bake in a hot dutch oven until the crust is dark.",
    ),
    "tax": (
        "Filing income tax returns",
        "Collect payslips and receipts, fill in the deductions form and submit it to the "
        "revenue office before April. Keep copies for seven years.",
    ),
    "garden": (
        "Tomato plants",
        "Water tomatoes deeply twice a week, pinch side shoots and tie stems to stakes. "
        "Fertilise with compost when the first fruits set.",
    ),
    "running": (
        "Marathon training plan",
        "Long run on Sunday, intervals on Tuesday, easy jogs between. Increase weekly mileage "
        "by ten percent and taper during the final three weeks.",
    ),
    "guitar": (
        "Guitar chords practice",
        "Practise switching between G, C and D chords with a metronome. Strum slowly, press "
        "strings near the frets and keep the fingertips curved.",
    ),
    "coffee": (
        "Espresso extraction",
        "Grind fine, dose eighteen grams, tamp evenly and pull a shot of about thirty seconds. "
        "Sour shots need a finer grind, bitter ones a coarser one.",
    ),
    "postgres": (
        "Database backup procedure",
        "Run pg_dump nightly, copy the archives offsite and test a restore every month. "
        "Point-in-time recovery needs WAL archiving enabled.",
    ),
    "cat": (
        "Feline veterinary care",
        "Vaccinate kittens at eight weeks, deworm regularly, book a yearly checkup with the vet "
        "and brush the teeth to prevent dental disease.",
    ),
    "python": (
        "Python packaging",
        "Write a pyproject.toml, build a wheel with the build module and upload it to PyPI with "
        "twine. Pin dependencies in a lock file.",
    ),
}

# (query, target): no query word occurs in its target note.
QUERIES: list[tuple[str, str]] = [
    ("checklist for upgrading the cluster servers", "k8s"),
    ("baking loaves at home", "bread"),
    ("paying what you owe the government yearly", "tax"),
    ("growing vegetables outdoors", "garden"),
    ("preparing for a long distance race", "running"),
    ("learning to play a stringed instrument", "guitar"),
    ("brewing a good cup in the morning", "coffee"),
    ("saving copies of my sql data", "postgres"),
    ("looking after a pet kitty's health", "cat"),
    ("publishing a library for others to install", "python"),
]
