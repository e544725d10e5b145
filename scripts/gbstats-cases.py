"""Writes src/experiments/statistics/gbstats-0.8.0-cases.json: random per-user data of A/B tests and
what gbstats 0.8.0 computes from it with its defaults, so that the statistics module can be checked
against gbstats itself (ADR 0043). Not run by CI; run it by hand to regenerate the cases:

    git clone https://github.com/growthbook/growthbook && git -C growthbook checkout c6b15529f6
    pip install numpy scipy pydantic   # gbstats 0.8.0's needs, less pandas (not used here)
    GBSTATS=growthbook/packages/stats python3 scripts/gbstats-cases.py

c6b15529f6 is the commit that made the package gbstats 0.8.0 ("Bump gbstats to 0.8.0 for pypi").
"""

import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.environ["GBSTATS"])
from gbstats import __version__  # noqa: E402
from gbstats.bayesian.tests import EffectBayesianABTest, EffectBayesianConfig  # noqa: E402
from gbstats.frequentist.tests import (  # noqa: E402
    FrequentistConfig,
    SequentialConfig,
    SequentialTwoSidedTTest,
    TwoSidedTTest,
)
from gbstats.models.statistics import (  # noqa: E402
    ProportionStatistic,
    RatioStatistic,
    SampleMeanStatistic,
)
from gbstats.utils import check_srm  # noqa: E402

assert __version__ == "0.8.0", __version__
rng = np.random.default_rng(20261127)


def per_user(kind, n, level):
    """One variant's per-user values: (values,) or (numerators, denominators)."""
    if kind == "proportion":
        return (rng.random(n) < level).astype(float)
    if kind == "mean":
        shape = rng.choice(["normal", "skewed", "constant", "sparse"], p=[0.4, 0.45, 0.05, 0.1])
        if shape == "normal":
            return rng.normal(level, level / 2 + 0.1, n)
        if shape == "skewed":
            return (rng.random(n) < 0.3) * rng.exponential(level, n)
        if shape == "constant":
            return np.full(n, float(round(level)))
        return (rng.random(n) < 0.02) * rng.integers(1, 5, n).astype(float)
    denominators = rng.poisson(level, n).astype(float)
    numerators = rng.binomial(denominators.astype(int), 0.3).astype(float) * rng.choice([1.0, 2.5])
    return numerators, denominators


def as_statistic(kind, values):
    n = len(values[0]) if kind == "ratio" else len(values)
    if kind == "proportion":
        s = float(values.sum())
        return {"kind": "proportion", "n": n, "sum": s}, ProportionStatistic(n=n, sum=s)
    if kind == "mean":
        s, ss = float(values.sum()), float((values**2).sum())
        return {"kind": "mean", "n": n, "sum": s, "sumSquares": ss}, SampleMeanStatistic(n=n, sum=s, sum_squares=ss)
    m, d = values
    ours = {
        "kind": "ratio",
        "n": n,
        "numeratorSum": float(m.sum()),
        "numeratorSumSquares": float((m**2).sum()),
        "denominatorSum": float(d.sum()),
        "denominatorSumSquares": float((d**2).sum()),
        "sumOfProducts": float((m * d).sum()),
    }
    theirs = RatioStatistic(
        n=n,
        m_statistic=SampleMeanStatistic(n=n, sum=ours["numeratorSum"], sum_squares=ours["numeratorSumSquares"]),
        d_statistic=SampleMeanStatistic(n=n, sum=ours["denominatorSum"], sum_squares=ours["denominatorSumSquares"]),
        m_d_sum_of_products=ours["sumOfProducts"],
    )
    return ours, theirs


def interval(result):
    """gbstats' default output (error_message set) is no result: null."""
    return None if result.error_message else [float(result.ci[0]), float(result.ci[1])]


cases = []
for index in range(120):
    kind = ["proportion", "mean", "ratio"][index % 3]
    n_a, n_b = (int(x) for x in rng.choice([1, 2, 3, 20, 100, 1000, 5000], 2, p=[0.04, 0.04, 0.04, 0.13, 0.25, 0.25, 0.25]))
    level = {
        "proportion": rng.choice([0.0, 0.02, 0.1, 0.5, 0.97, 1.0], p=[0.05, 0.25, 0.3, 0.3, 0.05, 0.05]),
        "mean": rng.choice([0.0, 1.0, 40.0], p=[0.05, 0.45, 0.5]),
        "ratio": rng.choice([0.05, 1.0, 3.0]),
    }[kind]
    lift = rng.choice([1.0, 1.0, 1.05, 1.2, 0.8])
    baseline, stat_a = as_statistic(kind, per_user(kind, n_a, level))
    variant, stat_b = as_statistic(kind, per_user(kind, n_b, min(level * lift, 1.0) if kind == "proportion" else level * lift))
    alpha = float(rng.choice([0.05, 0.05, 0.05, 0.1]))
    tuning = float(rng.choice([5000, 5000, 1000]))
    inverse = bool(rng.random() < 0.2)

    t_test = TwoSidedTTest(stat_a, stat_b, FrequentistConfig(alpha=alpha)).compute_result()
    sequential = SequentialTwoSidedTTest(stat_a, stat_b, SequentialConfig(alpha=alpha, sequential_tuning_parameter=tuning)).compute_result()
    bayesian = EffectBayesianABTest(stat_a, stat_b, EffectBayesianConfig(inverse=inverse)).compute_result()
    # gbstats.py analyze_metric_df: the "expected" its runner reports.
    if stat_a.unadjusted_mean <= 0:
        relative_lift = None
    elif t_test.expected == 0:
        relative_lift = (stat_b.mean - stat_a.mean) / stat_a.unadjusted_mean
    else:
        relative_lift = t_test.expected
    ci = interval(t_test)
    cases.append(
        {
            "case": index,
            "baseline": baseline,
            "variant": variant,
            "options": {"alpha": alpha, "sequentialTuning": tuning, "direction": "decrease" if inverse else "increase"},
            "summaries": [
                {"users": s.n, "mean": float(s.unadjusted_mean), "stddev": float(s.stddev)} for s in (stat_a, stat_b)
            ],
            "comparison": {
                "relativeLift": None if relative_lift is None else float(relative_lift),
                "ci95": ci,
                "pValue": None if t_test.error_message else float(t_test.p_value),
                "chanceToWin": None if bayesian.error_message else float(bayesian.chance_to_win),
                "sequentialCi95": interval(sequential),
                "significant": ci is not None and (ci[0] > 0 or ci[1] < 0),
            },
        }
    )

srm = []
for index in range(30):
    arms = int(rng.choice([2, 2, 3, 4]))
    weights = [float(w) for w in rng.dirichlet(np.ones(arms))]
    total = int(rng.choice([0, 10, 200, 5000, 100000]))
    skew = rng.choice([0.0, 0.02, 0.1])
    shares = np.array(weights) * (1 + skew * rng.normal(size=arms))
    users = [int(u) for u in rng.multinomial(total, shares / shares.sum())]
    p = float(check_srm(users, weights))
    srm.append({"users": users, "weights": weights, "pValue": p, "mismatch": p < 0.001})

assert all(math.isfinite(x) for c in cases for x in (c["summaries"][0]["stddev"], c["summaries"][1]["stddev"]))
target = os.path.join(os.path.dirname(__file__), "..", "src", "experiments", "statistics", "gbstats-0.8.0-cases.json")
with open(target, "w") as f:
    json.dump({"gbstats": __version__, "commit": "c6b15529f61150959b6725ff5221eba7545ef42e", "comparisons": cases, "srm": srm}, f, indent=1)
    f.write("\n")
print(f"{len(cases)} comparisons, {len(srm)} SRM checks")
