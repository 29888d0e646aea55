"""Issue #42's rule as properties: what the response commits to last decides, and a look never changes a value.

- a look (docs/verifier.md R5a/R5c/R5g) around any value: paid exactly when the value is the truth, in any marked
  form (the control is the same look around a wrong value);
- after a committed answer, a correction, a doubt proposing another value, a withdrawal or a conclusion naming
  another value is never paid, whichever of the two values is right; a correction *to* the truth is paid;
- a box on a named quantity before the final answer neither earns nor costs anything: only the last value counts.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gspo_cli.rewards import compute_score

LOOKS = ["{v} \\tag{{1}}", "{v}[^1]", "\\num{{{v}}}", "\\SI{{{v}}}{{\\centi\\metre}}", "\\qty{{{v}}}{{cm}}",
         "[{v}](#s)", "(B) {v}", "{v} (as computed above)", "{v} $\\blacksquare$", "***{v}***", "{v} <!-- ok -->",
         "\\text{{Answer: }} {v}"]
MARKED = ["Answer: {x}", "$\\boxed{{{x}}}$", "<answer>{x}</answer>", "**Final Answer** — {x}", "(Answer: {x})"]
AFTER = ["Correction: the answer is {w}.", "Erratum: the final value should be {w}.",
         "On second thought, {w} seems more plausible.", "Let me recount. So the total is {w}.",
         "I wonder whether the answer should be {w} instead.", "I withdraw this answer."]
THINK = "<think>\nThe cases add up.\n</think>\n\nThe count follows from the case analysis above.\n\n"
SOURCES = ["math_dapo", "aime2024"]


@settings(max_examples=300, deadline=None)
@given(gt=st.integers(1, 999), delta=st.integers(-50, 50), look=st.sampled_from(LOOKS),
       marked=st.sampled_from(MARKED[:3]), ds=st.sampled_from(SOURCES))
def test_a_look_never_changes_the_value(gt, delta, look, marked, ds):
    v = max(0, gt + delta)
    response = THINK + marked.format(x=look.format(v=v))
    assert compute_score(ds, response, str(gt))["acc"] is (v == gt), response


@settings(max_examples=300, deadline=None)
@given(gt=st.integers(0, 999), delta=st.integers(1, 500), right_first=st.booleans(), marked=st.sampled_from(MARKED),
       after=st.sampled_from(AFTER), ds=st.sampled_from(SOURCES))
def test_what_follows_the_answer_changes_or_voids_it(gt, delta, right_first, marked, after, ds):
    a, w = (gt, gt + delta) if right_first else (gt + delta, gt)
    response = THINK + marked.format(x=a) + "\n\n" + after.format(w=w)
    paid = compute_score(ds, response, str(gt))["acc"]
    # only a correction that names the truth last is paid; a doubt, a withdrawal or a disagreeing conclusion never is
    assert paid is (not right_first and after.startswith("Correction")), response


@settings(max_examples=200, deadline=None)
@given(gt=st.integers(0, 999), part=st.integers(0, 999), name=st.sampled_from(["m", "a_1", "p", "BD^2"]),
       ds=st.sampled_from(SOURCES))
def test_a_named_box_before_the_answer_neither_earns_nor_costs(gt, part, name, ds):
    for final, paid in ((gt, True), (gt + 1, False)):
        response = THINK + f"So ${name} = \\boxed{{{part}}}$.\n\nAnswer: {final}"
        assert compute_score(ds, response, str(gt))["acc"] is paid, response
