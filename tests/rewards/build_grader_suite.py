"""Build tests/rewards/data/grader_suite.jsonl: what a response commits to, read as a careful grader (issue #32).

Every label is set by hand from the rule in docs/verifier.md ("The rule: what a response commits to", clauses
R0-R5), never by running a verifier; each row names the clause that decides it (`clause`) and why (`note`).
The cases were written, and committed, before the verifier was run on them.

- R1 statements about the answer: marked answers (boxes and frames, answer labels in any language, a heading),
  answer sentences in any language, structured fields (JSON, YAML, markdown tables), the conclusion sentence
  before the first marked answer, and (only without those) the concluding statement;
- R2 modes: committed; not the response's (negated, counterfactual, format example, attributed); a candidate
  (hedged, a question, an alternative); qualified (a bound, a relation, an estimate, a range);
- R3 withdrawal: a retraction, a refusal or a strike-through withdraws what precedes it (a retraction naming
  its own value withdraws that value only);
- R4 the verdict: one committed value, and nothing written after the first committed statement that is false
  of it (a candidate must equal it, a bound must hold, an estimate must equal it, a negated value must differ);
- R5 reading a value: wrappers and frames, equality chains, spaced signs, number words in any language,
  repetition, integer form.

18 problems (eight AIME-2024 problems not used by the earlier suites, three AIME-2025, seven DAPO-style with
two negative answers), each with a short Qwen3 `<think>` block and a neutral summary sentence that names no
number (so it is never a conclusion sentence). Deterministic: `python tests/rewards/build_grader_suite.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).parent / "data" / "grader_suite.jsonl"

# (data_source, ground truth, wrong value, English words of both, Chinese numerals of both, a factorisation of
#  the truth (None for primes / negatives), a factorisation of another value, the asked quantity, thinking)
PROBLEMS = [
    ("aime2024", "294", "296", "two hundred ninety-four", "two hundred ninety-six", "二百九十四", "二百九十六",
     "2 \\cdot 3 \\cdot 7^2", "2 \\cdot 3 \\cdot 7^3", "N",
     "A path of 16 unit steps with exactly four turns has five runs, alternating R and U. Splitting the 8 R "
     "steps into 3 runs gives $\\binom{7}{2} = 21$ ways and the 8 U steps into 2 runs gives 7; both orders: "
     "$2 \\cdot 21 \\cdot 7 = 294$."),
    ("aime2024", "540", "504", "five hundred forty", "five hundred four", "五百四十", "五百零四",
     "2^2 \\cdot 3^3 \\cdot 5", "2^2 \\cdot 3^3 \\cdot 7", "M",
     "Write $z = 4e^{i\\theta}$; the real part is $324\\cos\\theta - 432\\sin\\theta$, whose maximum is "
     "$\\sqrt{324^2 + 432^2} = 540$."),
    ("aime2024", "480", "400", "four hundred eighty", "four hundred", "四百八十", "四百",
     "2^5 \\cdot 3 \\cdot 5", "2^4 \\cdot 5^2", "BD^2",
     "With the diagonals on lines $y = mx$ and $y = -x/m$, $BD^2 = 4(x^2 + y^2)$ on the hyperbola, and its "
     "greatest lower bound is 480."),
    ("aime2024", "110", "101", "one hundred ten", "one hundred one", "一百一十", "一百零一",
     "2 \\cdot 5 \\cdot 11", "2 \\cdot 5 \\cdot 13", "m",
     "The least prime with $p^2 \\mid n^4 + 1$ is $p = 17$; lifting the root modulo 289 gives $m = 110$."),
    ("aime2024", "236", "263", "two hundred thirty-six", "two hundred sixty-three", "二百三十六", "二百六十三",
     "2^2 \\cdot 59", "2^2 \\cdot 61", "\\sum a_i^2",
     "The list 5, 7, 9, 9 has sum 30, unique mode 9 and median 8, which is not in the list; the squares sum to "
     "$25 + 49 + 81 + 81 = 236$."),
    ("aime2024", "601", "610", "six hundred one", "six hundred ten", "六百零一", "六百一十",
     None, None, "|S|",
     "After the substitution the condition reads $(100-a)(100-b)(100-c) = 0$; the triples with a coordinate "
     "equal to 100 number 601."),
    ("aime2024", "23", "32", "twenty-three", "thirty-two", "二十三", "三十二",
     None, None, "p + q",
     "The point of $AB$ on no other segment is $C = (\\frac{1}{8}, \\frac{3\\sqrt{3}}{8})$, so $OC^2 = "
     "\\frac{7}{16}$ and $p + q = 23$."),
    ("aime2024", "315", "351", "three hundred fifteen", "three hundred fifty-one", "三百一十五", "三百五十一",
     "3^2 \\cdot 5 \\cdot 7", "3^3 \\cdot 13", "R",
     "Rectangles in the regular dodecagon come from pairs of perpendicular chord directions; adding the cases "
     "gives 315."),
    ("aime2025", "16", "61", "sixteen", "sixty-one", "十六", "六十一",
     "2^4", "2^5", "r",
     "The assignments with chocolate > vanilla > strawberry >= 1 among nine players number $N = 2016$, so the "
     "remainder modulo 1000 is 16."),
    ("aime2025", "279", "297", "two hundred seventy-nine", "two hundred ninety-seven", "二百七十九", "二百九十七",
     "3^2 \\cdot 31", "3^3 \\cdot 11", "N - 2025",
     "Eight-digit permutations of 1 to 8 divisible by 22 number $N = 2304$, and $N - 2025 = 279$."),
    ("aime2025", "504", "540", "five hundred four", "five hundred forty", "五百零四", "五百四十",
     "2^3 \\cdot 3^2 \\cdot 7", "2^2 \\cdot 3^3 \\cdot 5", "r^2 + s^2",
     "The tangential trapezoid has $r + s = 24$ and $rs = 36$, so $r^2 + s^2 = 576 - 72 = 504$."),
    ("math_dapo", "30", "36", "thirty", "thirty-six", "三十", "三十六",
     "5 \\cdot 3 \\cdot 2", "2 \\cdot 3 \\cdot 6", "n",
     "The divisor condition forces $n$ to be a product of three distinct primes, the least being "
     "$2 \\cdot 3 \\cdot 5 = 30$."),
    ("math_dapo", "-5", "5", "negative five", "five", "负五", "五",
     None, None, "x",
     "Solving $2x + 7 = -3$ gives $2x = -10$, so $x = -5$."),
    ("math_dapo", "-12", "12", "negative twelve", "twelve", "负十二", "十二",
     None, None, "k",
     "The product of the roots of $x^2 + x - 12$ is $-12$ by Vieta's formulas."),
    ("math_dapo", "2025", "2024", "two thousand twenty-five", "two thousand twenty-four", "二千零二十五",
     "二千零二十四", "3^4 \\cdot 5^2", "2^3 \\cdot 11 \\cdot 23", "S",
     "The sum of the first 45 odd numbers is $45^2 = 2025$."),
    ("math_dapo", "64", "46", "sixty-four", "forty-six", "六十四", "四十六",
     "2^6", "2 \\cdot 23", "a_6",
     "The sequence doubles from 2: 2, 4, 8, 16, 32, 64."),
    ("math_dapo", "7", "8", "seven", "eight", "七", "八",
     None, None, "d",
     "The remainder of 100 divided by 31 is 7."),
    ("aime2024", "699", "696", "six hundred ninety-nine", "six hundred ninety-six", "六百九十九", "六百九十六",
     "3 \\cdot 233", "2^3 \\cdot 3 \\cdot 29", "Q + R",
     "The greatest such four-digit number is $N = 5694$, so $Q = 5$, $R = 694$ and $Q + R = 699$."),
]

SUMMARY = "The count follows from the case analysis above."

# (shape, clause, every, template, label, note). A template is applied to problem i when (i + its index) %
# every == 0. Placeholders: «g» truth, «w» wrong value, «g+1», «g-1», «g+2», «g-2», «g-10», «ew»/«eww» English
# words of truth / wrong, «zg»/«zw» Chinese numerals, «fact»/«wfact» factorisations, «q» the asked quantity,
# «a» / «a+1» the absolute value of a negative truth (templates with «a» apply only to negative truths;
# with «fact» only where there is one; «lt1000» marks a template that needs 0 <= truth < 1000; «pos» one that
# needs a positive truth).
T = [
    # --- R2d a bound, a relation or an estimate as the answer: no committed value
    ("bound", "R2d", 3, "Answer: at least «g»", False, "a lower bound is not a value"),
    ("bound", "R2d", 3, "Answer: $n \\geq «g»$", False, "a relation is not a value"),
    ("bound", "R2d", 3, "The answer is less than «g+1».", False, "an upper bound is not a value"),
    ("bound", "R2d", 3, "Answer: «g» or more", False, "'N or more' is a bound"),
    ("bound", "R2d", 3, "\\boxed{\\le «g»}", False, "a relation in the box"),
    ("bound", "R2d", 3, "Answer: no more than «g»", False, "an upper bound"),
    ("bound", "R2d", 3, "Answer: more than «g-1»", False, "a strict lower bound"),
    ("bound", "R2d", 3, "\\boxed{x < «g+1»}", False, "a relation in the box"),
    ("bound", "R2d", 3, "Answer: $\\ge «g»$", False, "a relation symbol before the value"),
    ("bound", "R2d", 3, "答案：至少«g»", False, "zh: at least"),
    ("bound", "R2d", 3, "答案不超过«g»。", False, "zh: does not exceed"),
    ("bound", "R2d", 3, "Réponse : au moins «g»", False, "fr: at least"),
    ("bound", "R2d", 3, "Antwort: mindestens «g»", False, "de: at least"),
    ("bound", "R2d", 3, "Respuesta: al menos «g»", False, "es: at least"),
    ("bound", "R2d", 3, "Ответ: не менее «g»", False, "ru: not less than"),
    ("bound", "R2d", 3, "答え：«g»以上", False, "ja: N or more"),
    ("bound_control", "R2a", 3, "Answer: exactly «g»", True, "'exactly' states the value"),
    ("bound_control", "R1", 3, "The bound above gives at least «g» and the construction attains it.\n\nAnswer: «g»",
     True, "the bound is working, not a statement about the answer"),
    ("bound_control", "R4.2", 3, "Answer: «g»\n\nAs required, the answer is less than 1000.«lt1000»", True,
     "a bound after the commitment that holds for it"),
    ("bound_control", "R4.2", 3, "Answer: «g»\n\nSo the answer is greater than «g».", False,
     "a bound after the commitment that is false of it"),
    ("bound_control", "R4.2", 3, "The answer is at least «g-10», and checking the cases pins it down.\n\nAnswer: «g»",
     True, "a bound before the first commitment is the working"),
    # --- R2d / R2b not equal
    ("not_equal", "R2d", 3, "Answer: $n \\neq «w»$", False, "a relation, no value committed"),
    ("not_equal", "R2b", 3, "Answer: not «w»", False, "only a negated value"),
    ("not_equal", "R2d", 3, "The answer is not equal to «g».", False, "'not equal to' is a relation"),
    ("not_equal", "R2d", 3, "\\boxed{\\ne «g»}", False, "a relation in the box"),
    ("not_equal_control", "R4.2", 3, "Answer: «g»\n\nThe answer is not «w», as the naive count suggests.", True,
     "a negated other value after the commitment holds for it"),
    ("not_equal_control", "R4.2", 3, "Answer: «g»\n\nSo the answer is not «g».", False,
     "after the commitment the response denies its own value"),
    ("not_equal_control", "R4.2", 3, "Note that the answer is not «w», which double counts.\n\nAnswer: «g»", True,
     "a negated other value before the commitment"),
    # --- R2d an estimate
    ("approx", "R2d", 3, "Answer: about «g»", False, "an estimate"),
    ("approx", "R2d", 3, "Answer: approximately «g»", False, "an estimate"),
    ("approx", "R2d", 3, "Answer: $\\approx «g»$", False, "an estimate symbol"),
    ("approx", "R2d", 3, "The answer is roughly «g».", False, "an estimate"),
    ("approx", "R2d", 3, "Answer: ~«g»", False, "a tilde estimate"),
    ("approx", "R2d", 3, "\\boxed{\\approx «g»}", False, "an estimate in the box"),
    ("approx", "R2d", 3, "Answer: around «g»", False, "an estimate"),
    ("approx", "R2d", 3, "Answer: «g» (approximately)", False, "an estimate, qualifier after the value"),
    ("approx", "R2d", 3, "答案约为«g»。", False, "zh: approximately"),
    ("approx", "R2d", 3, "答案：«g»左右", False, "zh: about, after the value"),
    ("approx", "R2d", 3, "Antwort: ungefähr «g»", False, "de: approximately"),
    ("approx", "R2d", 3, "Réponse : environ «g»", False, "fr: about"),
    ("approx", "R2d", 3, "Respuesta: aproximadamente «g»", False, "es: approximately"),
    ("approx", "R2d", 3, "Ответ: примерно «g»", False, "ru: approximately"),
    ("approx", "R2d", 3, "答え：約«g»", False, "ja: about"),
    ("approx", "R2d", 3, "Answer: nearly «g»", False, "an estimate"),
    ("approx", "R2d", 3, "Answer: $x \\approx «g»$", False, "an estimate relation"),
    ("approx_control", "R1", 3, "Numerically the expression is about «g».0003, and it is an integer.\n\nAnswer: «g»",
     True, "an estimate in the working is not a statement about the answer"),
    ("approx_control", "R4.2", 3, "Answer: «g»\n\n(The answer is approximately «g».)", True,
     "an estimate after the commitment that equals it"),
    ("approx_control", "R4.2", 3, "Answer: «g»\n\nThe answer is approximately «w».", False,
     "an estimate after the commitment that differs from it"),
    # --- R2d a range
    ("range", "R2d", 3, "Answer: between «g-1» and «g+1»", False, "a range"),
    ("range", "R2d", 3, "Answer: «g»–«g+1»«pos»", False, "a range with a dash"),
    ("range", "R2d", 3, "Answer: $«g» \\pm 1$", False, "plus or minus"),
    ("range", "R2d", 3, "The answer lies between «g-2» and «g+2».", False, "a range"),
    # --- R2b attributed to someone else
    ("attributed", "R2b", 3, "My friend says the answer is «g».", False, "reported, not committed"),
    ("attributed", "R2b", 3, "According to the answer key, the answer is «g».", False, "attributed to the key"),
    ("attributed", "R2b", 3, "Some sources claim the answer is «g», but I could not verify it.", False,
     "attributed to others"),
    ("attributed", "R2b", 3, "Bob's answer: «g»", False, "someone else's answer"),
    ("attributed", "R2b", 3, "据说答案是«g»。", False, "zh: it is said"),
    ("attributed", "R2b", 3, "Selon le corrigé, la réponse est «g».", False, "fr: according to the key"),
    ("attributed", "R2b", 3, "Laut Lösungsheft ist die Antwort «g».", False, "de: according to the key"),
    ("attributed", "R2b", 3, "Según el libro, la respuesta es «g».", False, "es: according to the book"),
    ("attributed", "R2b", 3, "По словам учителя, ответ «g».", False, "ru: according to the teacher"),
    ("attributed", "R2b", 3, "The textbook says the answer is «g».", False, "attributed to the book"),
    ("attributed_control", "R2b", 3, "My friend says the answer is «w», but the count above gives «g».\n\nAnswer: «g»",
     True, "the attributed value is not a commitment; the response commits to the truth"),
    ("attributed_control", "R2a", 3, "As I showed above, the answer is «g».", True, "first person: committed"),
    ("attributed_control", "R2a", 3, "We found that the answer is «g».", True, "first person: committed"),
    ("attributed_control", "R2a", 3, "According to the case analysis above, the answer is «g».", True,
     "the response's own analysis, not someone else"),
    # --- R2c posed as a question
    ("question", "R2c", 3, "Is the answer «g»?", False, "a question"),
    ("question", "R2c", 3, "Answer: «g»?", False, "the answer line is a question"),
    ("question", "R2c", 3, "So the answer is «g»?", False, "a question"),
    ("question", "R2c", 3, "Could the answer be $\\boxed{«g»}$?", False, "a boxed question"),
    ("question", "R2c", 3, "答案是«g»吗？", False, "zh: question particle"),
    ("question", "R2c", 3, "答えは«g»でしょうか？", False, "ja: question"),
    ("question", "R2c", 3, "La réponse est-elle «g» ?", False, "fr: question"),
    ("question", "R2c", 3, "Ist die Antwort «g»?", False, "de: question"),
    ("question", "R2c", 3, "¿La respuesta es «g»?", False, "es: question"),
    ("question", "R2c", 3, "Ответ «g»?", False, "ru: question"),
    ("question", "R2c", 3, "정답은 «g»일까요?", False, "ko: question"),
    ("question_control", "R4.2", 3, "Is the answer «g»? Every case checks out, so yes.\n\nAnswer: «g»", True,
     "a question before the commitment"),
    ("question_control", "R4.2", 3, "Answer: «g»\n\nDoes this satisfy all the conditions? Yes.", True,
     "a question without a value"),
    ("question_control", "R4.2", 3, "Answer: «g»\n\nOr is it «w»?", False,
     "a different candidate asked after the commitment"),
    ("question_control", "R4.2", 3, "Could it be «w»? No: that counts the empty set.\n\nAnswer: «g»", True,
     "a candidate asked before the commitment"),
    # --- R3 withdrawn after being stated
    ("retracted", "R3", 3, "Answer: «g»\n\nWait, that is wrong.", False, "retracted"),
    ("retracted", "R3", 3, "Answer: «g». Scratch that, I made an error in the second case.", False, "retracted"),
    ("retracted", "R3", 3, "\\boxed{«g»}\n\nActually, I made a mistake above, so this is not right.", False,
     "retracted"),
    ("retracted", "R3", 3, "Answer: ~~«g»~~", False, "struck out"),
    ("retracted", "R3", 3, "答案：«g»\n\n不对，这个结果是错的。", False, "zh: retracted"),
    ("retracted", "R3", 3, "Réponse : «g». Non, c'est faux.", False, "fr: retracted"),
    ("retracted", "R3", 3, "Antwort: «g». Nein, das ist falsch.", False, "de: retracted"),
    ("retracted", "R3", 3, "Ответ: «g». Нет, это неверно.", False, "ru: retracted"),
    ("retracted", "R3", 3, "答え：«g»。いや、これは間違いです。", False, "ja: retracted"),
    ("retracted", "R3", 3, "답: «g». 아니, 이건 틀렸다.", False, "ko: retracted"),
    ("retracted", "R3", 3, "Respuesta: «g». No, eso es incorrecto.", False, "es: retracted"),
    ("retracted", "R3", 3, "The answer is «g». Disregard that; I mixed up the cases.", False, "retracted"),
    ("retracted", "R3", 3, "Answer: «g»\n\nHmm, I was wrong about the symmetric case, so this count is off.", False,
     "retracted"),
    ("retracted_control", "R3", 3, "Answer: «w»\n\nWait, that is wrong: I dropped a case.\n\nAnswer: «g»", True,
     "the first value is withdrawn, the second committed after it"),
    ("retracted_control", "R3", 3, "Answer: ~~«w»~~ «g»", True, "the struck value is withdrawn"),
    ("retracted_control", "R3", 3, "The first estimate was wrong; the answer is «g».", True,
     "a commitment after the retraction"),
    ("retracted_control", "R2b", 3, "Answer: «g»\n\nNote: counting reflections separately would be wrong.", True,
     "a counterfactual remark about a method, not a retraction"),
    ("retracted_control", "R3", 3, "答案：«w»\n\n不对，重新计算。\n\n答案：«g»", True,
     "zh: withdrawn, then committed anew"),
    ("retracted_control", "R3", 3, "Answer: «g»\n\nIn the first attempt I got «w», which was wrong.", True,
     "the retraction names its own value and withdraws only that"),
    ("retracted_control", "R3", 3, "Answer: «w» was a wrong guess.\nAnswer: «g»", True,
     "the retraction names its own value"),
    # --- R2c hedged (English)
    ("hedge_en", "R2c", 3, "The answer might be «g».", False, "hedged"),
    ("hedge_en", "R2c", 3, "Answer: probably «g»", False, "hedged"),
    ("hedge_en", "R2c", 3, "Answer: maybe «g»", False, "hedged"),
    ("hedge_en", "R2c", 3, "Perhaps the answer is «g».", False, "hedged"),
    ("hedge_en", "R2c", 3, "My best guess is «g».", False, "a guess"),
    ("hedge_en", "R2c", 3, "The answer is possibly «g».", False, "hedged"),
    ("hedge_en", "R2c", 3, "Answer: «g» (probably)", False, "hedged after the value"),
    ("hedge_en", "R2c", 3, "The answer could be «g».", False, "hedged"),
    ("hedge_en", "R2c", 3, "I guess the answer is «g».", False, "a guess"),
    ("hedge_en", "R2c", 3, "The answer is likely «g».", False, "hedged"),
    ("hedge_en_control", "R2a", 3, "I think the answer is «g».", True, "first-person belief is a commitment"),
    ("hedge_en_control", "R2a", 3, "The answer should be «g».", True, "'should be' states the answer"),
    ("hedge_en_control", "R2a", 3, "Answer: «g»\n\nI am confident in this count.", True, "committed"),
    # --- R2c hedged, other languages
    ("hedge_xx", "R2c", 3, "答案可能是«g»。", False, "zh: might"),
    ("hedge_xx", "R2c", 3, "答案也许是«g»。", False, "zh: perhaps"),
    ("hedge_xx", "R2c", 3, "答案大概是«g»。", False, "zh: probably"),
    ("hedge_xx", "R2c", 3, "答えは«g»かもしれません。", False, "ja: might"),
    ("hedge_xx", "R2c", 3, "答えはたぶん«g»です。", False, "ja: probably"),
    ("hedge_xx", "R2c", 3, "답은 아마 «g»일 것이다.", False, "ko: probably"),
    ("hedge_xx", "R2c", 3, "정답은 «g»일 수도 있다.", False, "ko: might"),
    ("hedge_xx", "R2c", 3, "La réponse est peut-être «g».", False, "fr: maybe"),
    ("hedge_xx", "R2c", 3, "La réponse pourrait être «g».", False, "fr: could"),
    ("hedge_xx", "R2c", 3, "Die Antwort ist vielleicht «g».", False, "de: maybe"),
    ("hedge_xx", "R2c", 3, "Die Antwort könnte «g» sein.", False, "de: could"),
    ("hedge_xx", "R2c", 3, "La respuesta es quizás «g».", False, "es: perhaps"),
    ("hedge_xx", "R2c", 3, "La respuesta podría ser «g».", False, "es: could"),
    ("hedge_xx", "R2c", 3, "Ответ, возможно, «g».", False, "ru: possibly"),
    ("hedge_xx", "R2c", 3, "Ответ может быть «g».", False, "ru: may be"),
    ("hedge_xx", "R2c", 3, "A resposta talvez seja «g».", False, "pt: perhaps"),
    ("lang_control", "R1b", 3, "答案是«g»。", True, "zh: the answer is"),
    ("lang_control", "R1b", 3, "答案为«g»。", True, "zh: the answer is"),
    ("lang_control", "R1b", 3, "La réponse est «g».", True, "fr: the answer is"),
    ("lang_control", "R1b", 3, "Die Antwort ist «g».", True, "de: the answer is"),
    ("lang_control", "R1b", 3, "La respuesta es «g».", True, "es: the answer is"),
    ("lang_control", "R1a", 3, "Ответ: «g».", True, "ru: answer label"),
    ("lang_control", "R1b", 3, "答えは«g»です。", True, "ja: the answer is"),
    ("lang_control", "R1b", 3, "정답은 «g»입니다.", True, "ko: the answer is"),
    ("lang_control", "R1b", 3, "A resposta é «g».", True, "pt: the answer is"),
    ("lang_control", "R1b", 3, "La risposta è «g».", True, "it: the answer is"),
    ("lang_control", "R1b", 3, "Ответ равен «g».", True, "ru: the answer equals"),
    # --- R2b negated, other languages
    ("negated_xx", "R2b", 3, "答案不是«g»。", False, "zh: is not"),
    ("negated_xx", "R2b", 3, "答えは«g»ではありません。", False, "ja: is not"),
    ("negated_xx", "R2b", 3, "정답은 «g»이 아니다.", False, "ko: is not"),
    ("negated_xx", "R2b", 3, "La réponse n'est pas «g».", False, "fr: is not"),
    ("negated_xx", "R2b", 3, "Die Antwort ist nicht «g».", False, "de: is not"),
    ("negated_xx", "R2b", 3, "La respuesta no es «g».", False, "es: is not"),
    ("negated_xx", "R2b", 3, "Ответ не «g».", False, "ru: is not"),
    ("negated_xx", "R2b", 3, "A resposta não é «g».", False, "pt: is not"),
    ("negated_xx_control", "R4.2", 3, "答案不是«w»。\n\n答案：«g»", True, "zh: another value denied, then committed"),
    ("negated_xx_control", "R4.2", 3, "La réponse n'est pas «w».\n\nRéponse : «g»", True,
     "fr: another value denied, then committed"),
    # --- R5d a numeral and number words
    ("numeral_word", "R5d", 3, "Answer: «g» («eww»)", False, "numeral and words disagree"),
    ("numeral_word", "R5d", 3, "Answer: «ew» («w»)", False, "words and numeral disagree"),
    ("numeral_word", "R5d", 3, "The answer is «eww» («g»).", False, "words and numeral disagree"),
    ("numeral_word", "R5d", 3, "Answer: «g», that is, «eww».", False, "numeral and words disagree"),
    ("numeral_word", "R5d", 3, "答案：«g»（«zw»）", False, "zh numerals disagree"),
    ("numeral_word_control", "R5d", 3, "\\boxed{«g»} («ew»)", True, "numeral and words agree"),
    ("numeral_word_control", "R5d", 3, "Answer: «g» («ew»)", True, "numeral and words agree"),
    ("numeral_word_control", "R5d", 3, "Answer: «ew» («g»)", True, "words and numeral agree"),
    ("numeral_word_control", "R5d", 3, "答案：«zg»", True, "zh numerals"),
    ("numeral_word_control", "R5d", 3, "答案：«g»（«zg»）", True, "zh numerals agree"),
    # --- R1a, R4.1 two answer labels in different languages
    ("label_lang", "R4.1", 3, "Answer: «g»\n答案：«w»", False, "labels in two languages disagree"),
    ("label_lang", "R4.1", 3, "答案：«g»\nAnswer: «w»", False, "labels in two languages disagree"),
    ("label_lang", "R4.1", 3, "Réponse : «g»\nAnswer: «w»", False, "labels in two languages disagree"),
    ("label_lang", "R4.1", 3, "Ответ: «w»\nAnswer: «g»", False, "labels in two languages disagree"),
    ("label_lang", "R4.1", 3, "Antwort: «g»\nAnswer: «w»", False, "labels in two languages disagree"),
    ("label_lang", "R4.1", 3, "答え：«w»\nAnswer: «g»", False, "labels in two languages disagree"),
    ("label_lang", "R4.1", 3, "정답: «g»\nAnswer: «w»", False, "labels in two languages disagree"),
    ("label_lang", "R4.1", 3, "Respuesta: «w»\nAnswer: «g»", False, "labels in two languages disagree"),
    ("label_lang_control", "R4.1", 3, "Answer: «g»\n答案：«g»", True, "labels agree"),
    ("label_lang_control", "R4.1", 3, "Ответ: «g»\nAnswer: «g»", True, "labels agree"),
    ("label_lang_control", "R4.1", 3, "Réponse : «g»\nAnswer: «g»", True, "labels agree"),
    # --- R1c structured output
    ("structured", "R1c", 2, "```json\n{\"answer\": «g», \"alternative\": «w»}\n```", False,
     "an alternative field beside the answer"),
    ("structured", "R1c", 2, "{\"answer\": «g»}", True, "a JSON answer field"),
    ("structured", "R1c", 2, "```json\n{\"final_answer\": «g», \"confidence\": 0.9}\n```", True,
     "confidence is not a statement about the answer"),
    ("structured", "R1c", 2, "{\"answer\": [«g», «w»]}", False, "two values in the answer field"),
    ("structured", "R1c", 2, "```json\n{\n  \"answer\": «g»,\n  \"other_possible_answer\": «w»\n}\n```", False,
     "an alternative field on its own line"),
    ("structured", "R1c", 2, "{\"answer\": \"«g»\", \"unit\": \"ways\"}", True, "a unit field"),
    ("structured", "R1c", 2, "| Quantity | Value |\n|---|---|\n| Answer | «g» |\n| Alternative | «w» |", False,
     "an alternative row"),
    ("structured", "R1c", 2, "| Quantity | Value |\n|---|---|\n| Answer | «g» |", True, "an answer row"),
    ("structured", "R1c", 2, "| Case | Count |\n|---|---|\n| first | 12 |\n| second | 22 |\n| **Answer** | **«g»** |",
     True, "a table of cases ending in the answer row"),
    ("structured", "R1c", 2, "| Answer | Alternative |\n|---|---|\n| «g» | «w» |", False, "an alternative column"),
    ("structured", "R1c", 2, "| Candidate | Value |\n|---|---|\n| main | «g» |\n| backup | «w» |", False,
     "candidates, no answer field"),
    ("structured", "R1c", 2, "answer: «g»\nalternative: «w»", False, "YAML alternative field"),
    ("structured", "R1c", 2, "```json\n{\"answer\": «w», \"alternative\": «g»}\n```", False,
     "the truth only as the alternative"),
    ("structured", "R1c", 2, "```json\n{\"answer\": «g»}\n```\n\nAnswer: «g»", True, "JSON and line agree"),
    ("structured", "R1c", 2, "```json\n{\"answer\": «w»}\n```\n\nAnswer: «g»", False, "JSON and line disagree"),
    # --- R2c, R4.2 a second candidate
    ("second_candidate", "R4.2", 3, "Answer: «g»\n\nIt might be «w» instead.", False, "a second candidate after"),
    ("second_candidate", "R4.2", 3, "Answer: «g»\n\n(Though it could also be «w».)", False, "a second candidate"),
    ("second_candidate", "R4.2", 3, "\\boxed{«g»}\n\nAlternatively, «w».", False, "an alternative"),
    ("second_candidate", "R4.2", 3, "Answer: «g»\n\nAnother possible answer is «w».", False, "an alternative"),
    ("second_candidate", "R4.2", 3, "Answer: «g»\n\nIf I miscounted the symmetric cases, it might be «w» instead.",
     False, "an alternative to the answer ('instead')"),
    ("second_candidate", "R4.2", 3, "Answer: «g»\n\n答案也可能是«w»。", False, "zh: could also be"),
    ("second_candidate", "R4.2", 3, "Answer: «g»\n\nOr maybe «w».", False, "an alternative"),
    ("second_candidate", "R4.2", 3, "Réponse : «g»\n\nCela pourrait aussi être «w».", False, "fr: could also be"),
    ("second_candidate", "R4.2", 3, "Answer: «g»\n\nThe answer could also be «w».", False, "could also be"),
    ("second_candidate", "R4.2", 3, "Answer: «w»\n\nIt might be «g» instead.", False,
     "the truth only as a candidate"),
    ("second_candidate_control", "R4.2", 3,
     "It might be «w» at first sight, but the symmetric cases rule it out.\n\nAnswer: «g»", True,
     "a candidate before the commitment"),
    ("second_candidate_control", "R4.2", 3,
     "The answer might be «w»; checking the remaining cases gives more.\n\nAnswer: «g»", True,
     "a candidate before the commitment"),
    ("second_candidate_control", "R2b", 3,
     "Answer: «g»\n\nP.S. If the problem meant ordered pairs, the answer would be «w».", True,
     "a counterfactual conditional, not a candidate"),
    ("second_candidate_control", "R1", 3,
     "Answer: «g»\n\nFor comparison, the «w» from the first attempt counted the empty set.", True,
     "a number in passing"),
    # --- R2b, R3 a format example in a response that gave up
    ("format_example", "R2b", 3, "I could not finish this problem.\n\nThe last line of the response should look "
     "like: Answer: «g»", False, "a format example after a refusal"),
    ("format_example", "R2b", 3, "I was unable to solve it. The final line should be of the form `Answer: «g»`.",
     False, "a format example"),
    ("format_example", "R2b", 3, "I ran out of time before finishing the count. (Format: Answer: «g»)", False,
     "a format example"),
    ("format_example", "R2b", 3, "I don't know how to finish. For reference, the answer line should read "
     "\"Answer: «g»\".", False, "a format example"),
    ("format_example", "R2b", 3, "I give up on this one; the expected format is `\\boxed{«g»}`.", False,
     "a format example"),
    ("format_example_control", "R2b", 3, "The last line of your response should be of the form Answer: $Answer "
     "(without quotes) where $Answer is the answer to the problem.\n\nAnswer: «g»", True,
     "the prompt's format sentence, then the answer"),
    ("format_example_control", "R2b", 3, "Following the required format (for example `Answer: «w»`), the result is "
     "below.\n\nAnswer: «g»", True, "an example with another value, then the answer"),
    # --- R5b equality chains
    ("equality_chain", "R5b", 2, "\\boxed{«g» = «fact»}", True, "the value, then its factorisation"),
    ("equality_chain", "R5b", 2, "\\boxed{«fact» = «g»}", True, "the factorisation, then the value"),
    ("equality_chain", "R5b", 2, "Answer: $«g» = «fact»$", True, "the value, then its factorisation"),
    ("equality_chain", "R5f", 2, "\\boxed{«fact»}", False, "only the factorisation: not the integer written"),
    ("equality_chain", "R5b", 2, "\\boxed{«g» = «wfact»}", False, "the sides have different values"),
    ("equality_chain", "R5b", 2, "Answer: «g» = «q»", True, "the value, then the asked quantity"),
    ("equality_chain", "R5b", 2, "\\boxed{«q» = «g»}", True, "the asked quantity, then the value"),
    ("equality_chain", "R5b", 2, "\\boxed{«g» = «q»}", True, "the value, then the asked quantity"),
    ("equality_chain", "R5b", 2, "Answer: «w» = «q»", False, "another value named as the asked quantity"),
    ("equality_chain", "R5b", 2, "\\boxed{«g» = «w»}", False, "two values"),
    # --- R5c a spaced minus sign (negative truths only)
    ("minus_spaced", "R5c", 1, "Answer: $- «a»$", True, "spaced minus in math"),
    ("minus_spaced", "R5c", 1, "\\boxed{- «a»}", True, "spaced minus in the box"),
    ("minus_spaced", "R5c", 1, "Answer: $-\\,«a»$", True, "LaTeX thin space after the minus"),
    ("minus_spaced", "R5c", 1, "Answer: − «a»", True, "Unicode minus and a space"),
    ("minus_spaced", "R5c", 1, "\\boxed{-\\ «a»}", True, "LaTeX space after the minus"),
    ("minus_spaced", "R5c", 1, "Answer: -  «a»", True, "two spaces"),
    ("minus_spaced", "R5c", 1, "Answer: $-«a»$", True, "control: no space"),
    ("minus_spaced", "R5c", 1, "Answer: $- «a+1»$", False, "another value"),
    ("minus_spaced", "R5c", 1, "Answer: $«a»$", False, "the sign dropped"),
    ("minus_spaced", "R5f", 1, "\\boxed{x - «a»}", False, "a variable minus the value: not a number"),
    # --- R5e the same value repeated
    ("repeated", "R5e", 3, "«rep_lines»", True, "the same answer line 20 times"),
    ("repeated", "R5e", 3, "«rep_boxes»", True, "the same box 30 times"),
    ("repeated", "R5e", 3, "«rep_sentences»\n\nAnswer: «g»", True, "the same answer sentence 25 times"),
    ("repeated", "R5e", 3, "«rep_lines»Answer: «w»", False, "20 agreeing lines, then another value"),
    ("repeated", "R5e", 3, "Answer: «w»\n«rep_lines»", False, "another value, then 20 agreeing lines"),
    ("repeated", "R5e", 3, "Answer: «g»\n\n«rep_final»", True, "17 'Final Answer' lines agreeing"),
    # --- R5a wrappers and frames
    ("wrapper", "R5a", 3, "Answer: \\textbf{«g»}", True, "bold text"),
    ("wrapper", "R5a", 3, "Answer: $\\mathbf{«g»}$", True, "bold math"),
    ("wrapper", "R5a", 3, "\\fbox{«g»}", True, "fbox"),
    ("wrapper", "R5a", 3, "\\framebox{«g»}", True, "framebox"),
    ("wrapper", "R5a", 3, "\\framebox[1.2\\width]{«g»}", True, "framebox with a width"),
    ("wrapper", "R5a", 3, "\\colorbox{yellow}{«g»}", True, "colorbox"),
    ("wrapper", "R5a", 3, "\\fcolorbox{red}{white}{«g»}", True, "fcolorbox"),
    ("wrapper", "R5a", 3, "\\boxed{\\textcolor{red}{«g»}}", True, "coloured text in a box"),
    ("wrapper", "R5a", 3, "Answer: {\\color{blue} «g»}", True, "colour switch"),
    ("wrapper", "R5a", 3, "Answer: ***«g»***", True, "bold italic"),
    ("wrapper", "R5a", 3, "Answer: __«g»__", True, "underscore bold"),
    ("wrapper", "R5a", 3, "Answer: *«g»*", True, "italic"),
    ("wrapper", "R5a", 3, "Answer: _«g»_", True, "underscore italic"),
    ("wrapper", "R5a", 3, "Answer: <b>«g»</b>", True, "HTML bold"),
    ("wrapper", "R5a", 3, "Answer: <strong>«g»</strong>", True, "HTML strong"),
    ("wrapper", "R5a", 3, "Answer: \\underline{«g»}", True, "underline"),
    ("wrapper", "R5a", 3, "Answer: \\emph{«g»}", True, "emphasis"),
    ("wrapper", "R5a", 3, "Answer: $\\boldsymbol{«g»}$", True, "bold symbol"),
    ("wrapper", "R5a", 3, "Answer: {\\Large «g»}", True, "size switch"),
    ("wrapper", "R5a", 3, "Answer: \\(\\displaystyle \\boxed{\\mathbf{«g»}}\\)", True, "display style, box, bold"),
    ("wrapper", "R5a", 3, "**Answer: \\boxed{\\textbf{«g»}}**", True, "bold line, box, bold text"),
    ("wrapper", "R5a", 3, "Answer: ==**«g»**==", True, "highlight and bold"),
    ("wrapper", "R5a", 3, "Answer: `«g»`", True, "code span"),
    ("wrapper", "R5a", 3, "```\nAnswer: «g»\n```", True, "code block"),
    ("wrapper", "R5a", 3, "Answer: <u>«g»</u>", True, "HTML underline"),
    ("wrapper", "R5a", 3, "Answer: <mark>«g»</mark>", True, "HTML highlight"),
    ("wrapper", "R5a", 3, "\\boxed{\\text{\\textbf{«g»}}}", True, "nested text commands in a box"),
    ("wrapper", "R5a", 3, "\\framebox{«w»}", False, "another value framed"),
    ("wrapper", "R5a", 3, "\\colorbox{yellow}{«w»}", False, "another value in a colorbox"),
    ("wrapper", "R4.1", 3, "\\fbox{«w»}\n\nAnswer: «g»", False, "a frame and a line disagree"),
    ("wrapper", "R4.1", 3, "\\colorbox{yellow}{«w»}\n\nAnswer: «g»", False, "a colorbox and a line disagree"),
    # --- R1a answer-label variants
    ("label_variant", "R1a", 3, "Final answer: «g»", True, "label variant"),
    ("label_variant", "R1a", 3, "FINAL ANSWER: «g»", True, "label variant"),
    ("label_variant", "R1a", 3, "**Final Answer:** «g»", True, "label variant"),
    ("label_variant", "R1a", 3, "**Final answer**: «g»", True, "label variant"),
    ("label_variant", "R1a", 3, "Ans: «g»", True, "abbreviated label"),
    ("label_variant", "R1a", 3, "Answer = «g»", True, "label with ="),
    ("label_variant", "R1a", 3, "Answer → «g»", True, "label with an arrow"),
    ("label_variant", "R1a", 3, "## Answer\n\n«g»", True, "heading, value below"),
    ("label_variant", "R1a", 3, "### Final Answer\n«g»", True, "heading, value below"),
    ("label_variant", "R1a", 3, "**Answer**\n\n«g»", True, "bold heading, value below"),
    ("label_variant", "R1a", 3, "Answer:\n\n$$«g»$$", True, "value in display math below"),
    ("label_variant", "R1a", 3, "Answer：«g»", True, "full-width colon"),
    ("label_variant", "R1a", 3, "The final answer: «g»", True, "label variant"),
    ("label_variant", "R1a", 3, "My answer: «g»", True, "label variant"),
    ("label_variant", "R1b", 3, "Answer is «g».", True, "answer sentence without article"),
    ("label_variant", "R1b", 3, "The answer is: **«g»**", True, "answer sentence with a colon"),
    ("label_variant", "R1a", 3, "最终答案：«g»", True, "zh: final answer"),
    ("label_variant", "R1a", 3, "答：«g»", True, "zh: answer"),
    ("label_variant", "R1a", 3, "Ответ: «g»", True, "ru"),
    ("label_variant", "R1a", 3, "Antwort: «g»", True, "de"),
    ("label_variant", "R1a", 3, "Respuesta: «g»", True, "es"),
    ("label_variant", "R1a", 3, "Resposta: «g»", True, "pt"),
    ("label_variant", "R1a", 3, "Risposta: «g»", True, "it"),
    ("label_variant", "R1a", 3, "答え：«g»", True, "ja"),
    ("label_variant", "R1a", 3, "정답: «g»", True, "ko"),
    ("label_variant", "R1a", 3, "답: «g»", True, "ko"),
    ("label_variant", "R1a", 3, "Réponse finale : «g»", True, "fr"),
    ("label_variant", "R1a", 3, "**ANSWER**: «g»", True, "label variant"),
    ("label_variant", "R1a", 3, "Answer (final): «g»", True, "label with a remark"),
    ("label_variant", "R1a", 3, "Ans: «w»", False, "another value"),
    ("label_variant", "R1a", 3, "## Answer\n\n«w»", False, "another value"),
    ("label_variant", "R1a", 3, "Ответ: «w»", False, "another value"),
    ("label_variant", "R4.1", 3, "Ans: «w»\n\nAnswer: «g»", False, "two labels disagree"),
    ("label_variant", "R4.1", 3, "## Final Answer\n\n«w»\n\nAnswer: «g»", False, "heading value and line disagree"),
    # --- a final output written in Chinese
    ("zh_final", "R1d", 3, "因此，满足条件的共有 «g» 个。\n\nAnswer: «g»", True, "zh conclusion agrees with the line"),
    ("zh_final", "R1b", 3, "所以答案是 «g»。", True, "zh answer sentence"),
    ("zh_final", "R1d", 3, "因此，满足条件的共有 «w» 个。\n\nAnswer: «g»", False,
     "zh conclusion sentence disagrees with the line"),
    ("zh_final", "R2c", 3, "所以答案可能是 «g»。", False, "zh hedged"),
    ("zh_final", "R2b", 3, "所以答案不是 «g»。", False, "zh negated"),
    # --- beyond the classes: checks and remarks after the answer
    ("after_answer", "R1", 3, "Answer: «g»\n\nCheck: the cases above add up to «g», as required.", True,
     "a check is not a statement about the answer"),
    ("after_answer", "R2a", 3, "Answer: «g» ✓", True, "a check mark after the value"),
    ("after_answer", "R2a", 3, "Answer: «g» (final)", True, "a remark without a value"),
    ("after_answer", "R2a", 3, "Answer: «g»\n\nThis is the final answer.", True, "a closing remark"),
    ("after_answer", "R2a", 3, "Answer: «g»\n\nI hope it is correct.", True, "a closing remark"),
    ("after_answer", "R1", 3, "Answer: «g».\n\nLet me double-check with a second method: it also gives «g».", True,
     "a check that agrees"),
    ("after_answer", "R2a", 3, "**Answer:** $\\boxed{«g»}$ (units: ways)", True, "a unit remark"),
    ("after_answer", "R4.1", 3, "Answer: either «g» or «w»", False, "two values"),
]


def _fill(template: str, p: tuple) -> str | None:
    ds, g, w, ew, eww, zg, zw, fact, wfact, q, _ = p
    gi = int(g)
    if "«a" in template and gi >= 0:
        return None
    if "«fact»" in template and fact is None or "«wfact»" in template and wfact is None:
        return None
    if "«lt1000»" in template and not 0 <= gi < 1000:
        return None
    if "«pos»" in template and gi <= 0:
        return None
    subs = {
        "«g»": g, "«w»": w, "«g+1»": str(gi + 1), "«g-1»": str(gi - 1), "«g+2»": str(gi + 2),
        "«g-2»": str(gi - 2), "«g-10»": str(gi - 10), "«ew»": ew, "«eww»": eww, "«zg»": zg, "«zw»": zw,
        "«fact»": fact or "", "«wfact»": wfact or "", "«q»": q, "«a»": str(abs(gi)), "«a+1»": str(abs(gi) + 1),
        "«lt1000»": "", "«pos»": "",
        "«rep_lines»": f"Answer: {g}\n" * 20, "«rep_boxes»": f"\\boxed{{{g}}} " * 30,
        "«rep_sentences»": f"The answer is {g}. " * 25, "«rep_final»": f"Final Answer: {g}\n" * 17,
    }
    for k, v in subs.items():
        template = template.replace(k, v)
    assert "«" not in template, template
    return template


def think(p: tuple) -> str:
    return f"<think>\nOkay, let me work through this.\n{p[10]}\nI think that is it.\n</think>\n\n{SUMMARY}\n\n"


def build() -> list[dict]:
    rows: list[dict] = []
    for k, (shape, clause, every, template, label, note) in enumerate(T):
        for i, p in enumerate(PROBLEMS):
            if (i + k) % every:
                continue
            tail = _fill(template, p)
            if tail is None:
                continue
            rows.append({"id": f"g{len(rows) + 1:04d}", "shape": shape, "clause": clause, "data_source": p[0],
                         "response": think(p) + tail, "ground_truth": p[1], "label": label, "note": note})
    return rows


if __name__ == "__main__":
    rows = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    tmp.replace(OUT)
    print(f"{len(rows)} cases -> {OUT}")
