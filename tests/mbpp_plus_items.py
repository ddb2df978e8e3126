"""Hand-written MBPP+-style rows (EvalPlus's MbppPlus release format) for tasks EvalPlus
treats specially: inputs it rebuilds as tuples, complex numbers or nested tuples, answers
compared as sets, "returns something" tasks, and the tasks with a second accepted
reading. Task ids and entry points are MBPP's, so both scorers apply their rules; the
descriptions and solutions are this project's own."""

from __future__ import annotations


def _row(task_id, entry, prompt, solution, base, plus, atol=0):
    return {
        "task_id": task_id,
        "entry_point": entry,
        "prompt": f'"""\n{prompt}\n"""\n',
        "canonical_solution": solution,
        "base_input": base,
        "plus_input": plus,
        "atol": atol,
        "contract": "",
        "assertion": "",
    }


MBPP_PLUS_ROWS = [
    _row(
        "Mbpp/2",
        "similar_elements",
        "Return the elements two tuples have in common.",
        "def similar_elements(first, second):\n    common = set(first) & set(second)\n    return tuple(sorted(common, reverse=True))\n",
        [[[3, 4, 5, 6], [5, 7, 4, 10]], [[1, 2, 3, 4], [5, 4, 3, 7]]],
        [[[11, 12, 14, 13], [17, 15, 14, 13]], [[], [1]]],
    ),
    _row(
        "Mbpp/3",
        "is_not_prime",
        "Tell whether a number is not prime.",
        "def is_not_prime(n):\n    if n < 2:\n        return True\n    k = 2\n    while k * k <= n:\n        if n % k == 0:\n            return True\n        k += 1\n    return False\n",
        [[2], [10], [35], [37]],
        [[1], [0], [97], [91]],
    ),
    _row(
        "Mbpp/124",
        "angle_complex",
        "Return the angle of the complex number a + b.",
        "import cmath\n\ndef angle_complex(a, b):\n    return cmath.phase(a + b)\n",
        [["0", "1j"], ["2", "1j"], ["0", "2j"]],
        [["-1", "0.5j"], ["3", "-4j"]],
    ),
    _row(
        "Mbpp/164",
        "are_equivalent",
        "Tell whether the sums of the divisors of two integers are equal.",
        "def are_equivalent(a, b):\n    def divisors(n):\n        return sum(d for d in range(1, n) if n % d == 0)\n    return divisors(a) == divisors(b)\n",
        [[36, 57], [2, 4], [23, 47]],
        [[10, 11], [6, 28]],
    ),
    _row(
        "Mbpp/252",
        "convert",
        "Return the polar coordinates of a complex number.",
        "import cmath\n\ndef convert(number):\n    return cmath.polar(number)\n",
        [["1"], ["4"], ["5"]],
        [["(3+4j)"], ["-2j"]],
    ),
    _row(
        "Mbpp/295",
        "sum_div",
        "Return the sum of the proper divisors of a number.",
        "def sum_div(number):\n    total = 0\n    for d in range(1, number):\n        if number % d == 0:\n            total += d\n    return total\n",
        [[8], [12], [7]],
        [[1], [28], [100]],
    ),
    _row(
        "Mbpp/558",
        "digit_distance_nums",
        "Return the sum of the digits of the difference of two integers.",
        "def digit_distance_nums(n1, n2):\n    return sum(int(c) for c in str(abs(n1 - n2)))\n",
        [[1, 2], [23, 56], [123, 256]],
        [[99, 1], [5000, 4321]],
    ),
    _row(
        "Mbpp/580",
        "extract_even",
        "Remove the odd elements from a nested tuple.",
        "def extract_even(items):\n    kept = []\n    for x in items:\n        if isinstance(x, tuple):\n            kept.append(extract_even(x))\n        elif x % 2 == 0:\n            kept.append(x)\n    return tuple(kept)\n",
        [[[4, 5, [7, 6, [2, 4]], 6, 8]], [[5, 6, [8, 7, [4, 8]], 7, 9]]],
        [[[1, 3, 5]], [[[2], [3, 4]]]],
    ),
    _row(
        "Mbpp/581",
        "surface_Area",
        "Return the surface area of a square pyramid from its base edge and slant height.",
        "def surface_Area(edge, slant):\n    return 2 * edge * slant + edge * edge\n",
        [[3, 4], [4, 5], [1, 2]],
        [[10, 20], [6, 1]],
    ),
    _row(
        "Mbpp/787",
        "text_match_three",
        "Find an 'a' followed by three 'b's in a string.",
        "import re\n\ndef text_match_three(text):\n    return re.search('ab{3}?', text)\n",
        [["ac"], ["dc"], ["abbbba"], ["caacabbbba"]],
        [["abbb"], [""], ["xyz"]],
    ),
]
