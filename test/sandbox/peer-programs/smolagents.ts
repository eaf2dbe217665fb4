import type { PeerCase, PeerExpectation } from './peer-case.ts';

// Programs from huggingface/smolagents tests/test_local_python_executor.py (TestEvaluatePythonCode,
// TestLocalPythonExecutor): the code as the test has it; the expected value as its assertions state. Where a test
// asserts on the interpreter's state instead, the names it checks are the program's last expression.
const SOURCE = 'huggingface/smolagents tests/test_local_python_executor.py';

const v = (name: string, code: string, value: unknown): PeerCase => ({
  source: SOURCE,
  name,
  language: 'python',
  code,
  expect: { value },
});
const w = (name: string, code: string, warns: string): PeerCase => ({
  source: SOURCE,
  name,
  language: 'python',
  code,
  expect: { value: null, warns },
});
const e = (
  name: string,
  code: string,
  error: Extract<PeerExpectation, { error: unknown }>['error'],
): PeerCase => ({
  source: SOURCE,
  name,
  language: 'python',
  code,
  expect: { error },
});

export const smolagentsCases: readonly PeerCase[] = [
  // The value of the last statement, an assignment's included ("evaluate returns the value of the last assignment").
  v('assign', 'x = 3', 3),
  v('last of two assignments', 'x = 3\ny = 5', 5),
  v('assign None after ;', 'a=1;b=None', null),
  v(
    'subscript call',
    'def foo(x,y):return x*y\n\ndef boo(y):\n\treturn y**3\nfun = [foo, boo]\nresult_foo = fun[0](4,2)\nresult_boo = fun[1](4)',
    64,
  ),
  v(
    'kwargs unpacking',
    "def test_func(a, b=10, **kwargs):\n    return a + b + sum(kwargs.values())\n\nkwargs_dict = {'x': 5, 'y': 15}\ntest_func(1, **kwargs_dict)",
    31,
  ),
  v(
    'kwargs with keywords',
    "def test_func(a, **kwargs):\n    return a + sum(kwargs.values())\n\nkwargs_dict = {'x': 5, 'y': 15}\ntest_func(1, b=20, **kwargs_dict)",
    41,
  ),
  v(
    'two kwargs unpackings',
    "def test_func(**kwargs):\n    return sum(kwargs.values())\n\ndict1 = {'a': 1, 'b': 2}\ndict2 = {'c': 3, 'd': 4}\ntest_func(**dict1, **dict2)",
    10,
  ),
  v(
    'empty kwargs',
    'def test_func(a, **kwargs):\n    return a + len(kwargs)\n\nempty_dict = {}\ntest_func(10, **empty_dict)',
    10,
  ),
  e(
    'kwargs of a list',
    'def test_func(**kwargs):\n    return sum(kwargs.values())\n\nnot_a_dict = [1, 2, 3]\ntest_func(**not_a_dict)',
    { name: 'TypeError', message: 'must be a mapping' },
  ),
  e('kwargs of None', 'def test_func(**kwargs):\n    return kwargs\n\ntest_func(**None)', {
    name: 'TypeError',
    message: 'must be a mapping',
  }),
  v(
    'class def',
    'class MyClass:\n    """A class with a value."""\n\n    def __init__(self, value):\n        self.value = value\n\n    def get_value(self):\n        return self.value\n\ninstance = MyClass(42)\nresult = instance.get_value()',
    42,
  ),
  v(
    'class attribute targets',
    'class TestSubClass:\n    attr1 = 1\nclass TestClass:\n    data = TestSubClass()\n    data.attr1 = "value1"\n    data.attr2 = "value2"\nresult = (TestClass.data.attr1, TestClass.data.attr2)',
    ['value1', 'value2'],
  ),
  v('f-string', "x = 3\ntext = f'This is x: {x}.'", 'This is x: 3.'),
  v('f-string format', "x = 3.336\ntext = f'This is x: {x:.2f}.'", 'This is x: 3.34.'),
  v(
    'f-string nested format',
    "x, width, precision = 3.336, 10, 2\ntext = f'This is x: {x:>{width}.{precision}f}.'",
    'This is x:       3.34.',
  ),
  v('if: the branch taken', 'x = 3\nif x <= 3:\n    y = 2\nelse:\n    y = 5', 2),
  v('if: the else branch', 'x = 8\nif x <= 3:\n    y = 2\nelse:\n    y = 5', 5),
  v('dict literal', "x = 3\ntest_dict = {'x': x, 'y': x + 2}", { x: 3, y: 5 }),
  v('subscript of a list', 'x = 3\ntest_list = [x, x + 2]\ntest_list[1]', 5),
  v(
    'dict item set after ;',
    "vendor = {'revenue': 31000, 'rent': 50312}; vendor['ratio'] = round(vendor['revenue'] / vendor['rent'], 2)\nvendor",
    { revenue: 31000, rent: 50312, ratio: 0.62 },
  ),
  e(
    'subscript a string with a string',
    "search_results = \"[{'title': 'Paris'}]\"\nfor result in search_results:\n    if 'current' in result['title'].lower():\n        break",
    { name: 'TypeError', message: 'string indices must be integers' },
  ),
  v('for: the last iteration', 'x = 0\nfor i in range(3):\n    x = i', 2),
  v(
    'recursion',
    'def recur_fibo(n):\n    if n <= 1:\n        return n\n    else:\n        return(recur_fibo(n-1) + recur_fibo(n-2))\nrecur_fibo(6)',
    8,
  ),
  v('string methods', "'hello'.replace('h', 'o').split('e')", ['o', 'llo']),
  v('slicing', "'hello'[1:3][::-1]", 'le'),
  v(
    'list comprehension',
    "sentence = 'THESEAGULL43'\nmeaningful_sentence = '-'.join([char.lower() for char in sentence if char.isalpha()])",
    't-h-e-s-e-a-g-u-l-l',
  ),
  v(
    'nested for with +=',
    'text_block = [\n    "THESE",\n    "AGULL"\n]\nsentence = ""\nfor block in text_block:\n    for col in range(len(text_block[0])):\n        sentence += block[col]\n        ',
    'THESEAGULL',
  ),
  v('tuple index', 'x = (1, 2, 3)\nx[1]', 2),
  v(
    'swap by subscripts',
    'digits, i = [1, 2, 3], 1\ndigits[i], digits[i + 1] = digits[i + 1], digits[i]\ndigits',
    [1, 3, 2],
  ),
  // A dict with keys that are not strings is a Map, which JSON shows as [key, value] pairs.
  v('dict comprehension', 'x = {i: i**2 for i in range(3)}', [
    [0, 0],
    [1, 1],
    [2, 4],
  ]),
  v(
    'dict comprehension with int keys',
    "{num: name for num, name in {101: 'a', 102: 'b'}.items() if name not in ['a']}",
    [[102, 'b']],
  ),
  v(
    'dict comprehension unpacking',
    "shifts = {'A': ('6:45', '8:00'), 'B': ('10:00', '11:45')}\nshift_minutes = {worker: ('a', 'b') for worker, (start, end) in shifts.items()}",
    { A: ['a', 'b'], B: ['a', 'b'] },
  ),
  v('list comprehension of range', 'x = [i for i in range(3)]', [0, 1, 2]),
  v(
    'nested list comprehension',
    "simple_list = [\n    (x, y)\n    for x in [1, 2, 1]\n    for y in ['a', 'b']\n]",
    [
      [1, 'a'],
      [1, 'b'],
      [2, 'a'],
      [2, 'b'],
      [1, 'a'],
      [1, 'b'],
    ],
  ),
  v(
    'set comprehension',
    "batman_times = {entry['time'] for entry in [{'time': 10}, {'time': 19}, {'time': 20}]}\nsorted(batman_times)",
    [10, 19, 20],
  ),
  v(
    'generator over an infinite sequence',
    'import itertools\n\ndef infinite_counter():\n    return itertools.count()\n\neven_numbers = (x for x in infinite_counter() if x % 2 == 0)\nfirst_three = []\ngen_iter = iter(even_numbers)\nfor _ in range(3):\n    first_three.append(next(gen_iter))\n\nresult = first_three',
    [0, 2, 4],
  ),
  // What cannot leave the sandbox (a generator, a class) is no result: an assignment's is None, with a warning.
  w('a generator assigned last', 'x = (i for i in range(3))', 'generator'),
  e('a generator as the last expression', 'x = (i for i in range(3))\nx', {
    code: 'RESULT_INVALID',
    message: 'generator',
  }),
  v('break', 'for i in range(10):\n    if i == 5:\n        break\ni', 5),
  v('pass', 'for i in range(10):\n    if i == 5:\n        pass\ni', 9),
  v('continue', 'cnt = 0\nfor i in range(10):\n    continue\n    cnt += 1\ncnt', 0),
  v('continue in if', 'cnt = 0\nfor i in range(3):\n    if i == 1:\n        continue\n    cnt += 1\ncnt', 2),
  v('import math', 'import math\nstr(math.ceil(149))', '149'),
  v('lambda', 'f = lambda x: x + 2\nf(3)', 5),
  v('tuple assignment', 'a, b = 0, 1\nb', 1),
  v('while', 'i = 0\nwhile i < 3:\n    i += 1\ni', 3),
  v('generator from ;', 'a = [1, 2, 3, 4, 5]; b = (i**2 for i in a); list(b)', [1, 4, 9, 16, 25]),
  v(
    'boolops in if/else',
    'a, b, c, d, e = 1, 2, 3, 4, 5\nif (not (a > b and a > c)) or d > e:\n    best_city = "Brooklyn"\nelse:\n    best_city = "Manhattan"\n    best_city\n    ',
    'Brooklyn',
  ),
  v(
    'boolops in elif',
    'a, b, c, d, e = 1, 2, 3, 4, 5\nif d > e and a < b:\n    best_city = "Brooklyn"\nelif d < e and a < b:\n    best_city = "Sacramento"\nelse:\n    best_city = "Manhattan"\n    best_city\n    ',
    'Sacramento',
  ),
  v('short circuit', 'x, y, z = 5, 0, 10\nresult = (x > 3 and y) or (z == 10 and not y)\nresult', true),
  v('or of falsy values', 'a, b, c = None, "Found", ""\nresult = (a or c) or b\nresult', 'Found'),
  v('imports: math.sqrt', 'import math\nmath.sqrt(4)', 2),
  v('imports: time.sleep is None', 'import time, re\ntime.sleep(0.1)', null),
  v('imports: queue', 'from queue import Queue\nq = Queue()\nq.put(1)\nq.get()', 1),
  v('imports: itertools', 'import itertools\nlist(itertools.islice(range(10), 3))', [0, 1, 2]),
  v('imports: re', "import re\nre.search('a', 'abc').group()", 'a'),
  v('imports: stat', 'import stat\nstat.S_ISREG(0o100644)', true),
  v('imports: statistics', 'import statistics\nstatistics.mean([1, 2, 3, 4, 4])', 2.8),
  v('imports: unicodedata', "import unicodedata\nunicodedata.name('A')", 'LATIN CAPITAL LETTER A'),
  v(
    'imports: numpy.random',
    'import numpy.random as rd\nrng = rd.default_rng(12345)\n0 <= rng.random() < 1',
    true,
  ),
  v('chained comparisons', '0 <= -1 < 4 and 0 <= -5 < 4', false),
  v('chained comparisons true', '0 <= 3 < 4 and 0 <= 3 < 4', true),
  v('print is None', "print('Hello world!')\nprint('Ok no one cares')", null),
  v(
    'tuple target in for',
    "for a, b in [('Ralf Weikert', 'Austria'), ('Samuel Seungwon Lee', 'South Korea')]:res = a.split()[0]",
    'Samuel',
  ),
  v(
    'classes and inheritance',
    'class Animal:\n    species = "Generic Animal"\n    def __init__(self, name, age):\n        self.name = name\n        self.age = age\n    def __str__(self):\n        return f"{self.name}, {self.age} years old"\n\nclass Dog(Animal):\n    def __init__(self, name, age, breed):\n        super().__init__(name, age)\n        self.breed = breed\n    def sound(self):\n        return "The dog barks."\n\nclass Cat(Animal):\n    def __str__(self):\n        return f"{self.name}, {self.age} years old, {self.species}"\n\ndog1 = Dog("Fido", 3, "Labrador")\ntry:\n    raise ValueError("An error occurred")\nexcept ValueError as e:\n    exception_message = str(e)\n[dog1.sound(), str(Cat("Whiskers", 2)), exception_message]',
    ['The dog barks.', 'Whiskers, 2 years old, Generic Animal', 'An error occurred'],
  ),
  // CPython binds self to 1 (smolagents' interpreter says 15).
  v(
    'variable args',
    'def var_args_method(self, *args, **kwargs):\n    return sum(args) + sum(kwargs.values())\n\nvar_args_method(1, 2, 3, x=4, y=5)',
    14,
  ),
  // CPython calls method_that_raises() a TypeError, which the except ValueError does not catch.
  e(
    'except assigns',
    'def method_that_raises(self):\n    raise ValueError("An error occurred")\n\ntry:\n    method_that_raises()\nexcept ValueError as e:\n    exception_message = str(e)\n    ',
    { name: 'TypeError', message: "missing 1 required positional argument: 'self'" },
  ),
  w('types as objects', 'type_a = float(2); type_b = str; type_c = int', 'type'),
  v(
    'non-simple augassign',
    "counts_dict = {'a': 0}\ncounts_dict['a'] += 1\ncounts_list = [1, 2, 3]\ncounts_list += [4, 5, 6]\n\nclass Counter:\n    def __init__(self):\n        self.count = 0\n\na = Counter()\na.count += 1\n[counts_dict, counts_list, a.count]",
    [{ a: 1 }, [1, 2, 3, 4, 5, 6], 1],
  ),
  e('int added to a list', 'counts = [1, 2, 3]\ncounts += 1', {
    name: 'TypeError',
    message: "'int' object is not iterable",
  }),
  e('the line of the error', 'a = 1\nb = 2\n\ncounts = [1, 2, 3]\ncounts += 1\nb += 1', {
    name: 'TypeError',
    message: 'not iterable',
  }),
  e(
    'error raised in a function',
    'def error_function():\n    raise ValueError("error")\n\nerror_function()',
    { name: 'ValueError', message: 'error' },
  ),
  e('assert', '\nassert 1 == 1\nassert 1 == 2\n', { name: 'AssertionError', message: '' }),
  v(
    'with: context manager',
    'class SimpleLock:\n    def __init__(self):\n        self.locked = False\n    def __enter__(self):\n        self.locked = True\n        return self\n    def __exit__(self, exc_type, exc_value, traceback):\n        self.locked = False\n\nlock = SimpleLock()\nwith lock as l:\n    assert l.locked == True\nassert lock.locked == False\nlock.locked',
    false,
  ),
  v(
    'with: exception suppressed',
    'class Suppressor:\n    def __enter__(self):\n        return self\n    def __exit__(self, exc_type, exc_val, exc_tb):\n        return True\n\nwith Suppressor():\n    raise ValueError("should be suppressed")\n"ok"',
    'ok',
  ),
  e(
    'with: exception not suppressed',
    'class NonSuppressor:\n    def __enter__(self):\n        return self\n    def __exit__(self, exc_type, exc_val, exc_tb):\n        return False\n\nwith NonSuppressor():\n    raise ValueError("should propagate")',
    { name: 'ValueError', message: 'should propagate' },
  ),
  e(
    'with: __exit__ raising replaces',
    'class RaisingExit:\n    def __enter__(self): return self\n    def __exit__(self, exc_type, exc_val, exc_tb):\n        raise RuntimeError("from __exit__")\n\nwith RaisingExit():\n    raise ValueError("original")',
    { name: 'RuntimeError', message: 'from __exit__' },
  ),
  v('default arguments', 'def f(a, b=333, n=1000):\n    return b + n\nn = f(1, n=667)', 1000),
  v(
    'sets',
    "S1 = {'a', 'b', 'c'}\nS2 = {'b', 'c', 'd'}\nS3 = S1.difference(S2)\nS4 = S1.intersection(S2)\n[sorted(S3), sorted(S4)]",
    [['a'], ['b', 'c']],
  ),
  v(
    'early return',
    'def add_one(n, shift):\n    if True:\n        return n + shift\n    return n\n\nadd_one(1, 1)',
    2,
  ),
  v('return None', 'def returns_none(a):\n    return\n\nreturns_none(1)', null),
  v(
    'nested for loops',
    'all_res = []\nfor i in range(10):\n    subres = []\n    for j in range(i):\n        subres.append(j)\n    all_res.append(subres)\n\nout = [i for sublist in all_res for i in sublist]\nout[:10]',
    [0, 0, 1, 0, 1, 2, 0, 1, 2, 3],
  ),
  v(
    'pandas',
    "import pandas as pd\n\ndf = pd.DataFrame.from_dict({'SetCount': ['5', '4', '5'], 'Quantity': [1, 0, -1]})\n\ndf['SetCount'] = pd.to_numeric(df['SetCount'], errors='coerce')\n\nparts_with_5_set_count = df[df['SetCount'] == 5.0]\nparts_with_5_set_count[['Quantity', 'SetCount']].values[1].tolist()",
    [-1, 5],
  ),
  v(
    'pandas groupby',
    'import pandas as pd\ndata = pd.DataFrame.from_dict([\n    {"Pclass": 1, "Survived": 1},\n    {"Pclass": 2, "Survived": 0},\n    {"Pclass": 2, "Survived": 1}\n])\nsurvival_rate_by_class = data.groupby(\'Pclass\')[\'Survived\'].mean()\nfloat(survival_rate_by_class.values[1])',
    0.5,
  ),
  v(
    'starred arguments',
    'from math import radians, sin, cos, sqrt, atan2\ndef haversine(lat1, lon1, lat2, lon2):\n    R = 6371000\n    lat1, lon1, lat2, lon2 = map(radians, [lat1, lon1, lat2, lon2])\n    dlat = lat2 - lat1\n    dlon = lon2 - lon1\n    a = sin(dlat / 2) ** 2 + cos(lat1) * cos(lat2) * sin(dlon / 2) ** 2\n    c = 2 * atan2(sqrt(a), sqrt(1 - a))\n    return R * c\ncoords_geneva = (46.1978, 6.1342)\ncoords_barcelona = (41.3869, 2.1660)\ndistance_geneva_barcelona = round(haversine(*coords_geneva, *coords_barcelona), 1)',
    622395.4,
  ),
  v(
    'for over items',
    'shifts = {\n    "Worker A": ("6:45 pm", "8:00 pm"),\n    "Worker B": ("10:00 am", "11:45 am")\n}\nshift_intervals = {}\nfor worker, (start, end) in shifts.items():\n    shift_intervals[worker] = end\nshift_intervals',
    { 'Worker A': '8:00 pm', 'Worker B': '11:45 am' },
  ),
  e('syntax error', 'a = ;', { code: 'SYNTAX_ERROR', name: 'SyntaxError', message: 'invalid syntax' }),
  e(
    'a key that is not there',
    'capitals = {"Czech Republic": "Prague", "Monaco": "Monaco", "Bhutan": "Thimphu"};capitals["Butan"]',
    { name: 'KeyError', message: 'Butan' },
  ),
  v('final_answer(answer=)', 'final_answer(answer=2)', 2),
  v(
    'final_answer not caught by except Exception',
    'try:\n    final_answer(1)\nexcept Exception as e:\n    final_answer(2)',
    1,
  ),
  v(
    'class with pass',
    'class TestClass:\n    pass\ninstance = TestClass()\ninstance.attr = "value"\nresult = instance.attr',
    'value',
  ),
  v(
    'class annotated assignments',
    'class TestClass:\n    x: int = 5\n    y: str = "test"\ninstance = TestClass()\nresult = (instance.x, instance.y)',
    [5, 'test'],
  ),
  v(
    'class annotated subscripts',
    'class TestClass:\n    key_data: dict = {}\n    key_data["key"]: str = "value"\n    index_data: list = [10, 20, 30]\n    index_data[0:2]: list[str] = ["a", "b"]\nresult = (TestClass.key_data[\'key\'], TestClass.index_data[1:])',
    ['value', ['b', 30]],
  ),
  v(
    'enum',
    'from enum import Enum\nclass Status(Enum):\n    SUCCESS = "Success"\n    FAILURE = "Failure"\nstatus_value = Status.SUCCESS.value\nstatus_name = Status.SUCCESS.name\n[status_value, status_name]',
    ['Success', 'SUCCESS'],
  ),
  v(
    'annotated assignments',
    'x: int = 42\ny: float = x / 2\nz: list\nnames: list = ["Alice", "Bob", "Charlie"]\ns: str = 123\nresult = (x, y, names, s)',
    [42, 21, ['Alice', 'Bob', 'Charlie'], 123],
  ),
  v('augassign', 'x = 1\nx += 2\n', 3),
  v('augassign strings', 'x = "a"\nx += "b"\n', 'ab'),
  v(
    'augassign custom __iadd__',
    'class Custom:\n    def __init__(self, value):\n        self.value = value\n    def __iadd__(self, other):\n        self.value += other * 10\n        return self\nx = Custom(1)\nx += 2\nx.value',
    21,
  ),
  v('augassign **=', 'x = 5\nx **= 2\n', 25),
  v('augassign //=', 'x = 5\nx //= 2\n', 2),
  v('augassign <<=', 'x = 5\nx <<= 2\n', 20),
  e('del then use', 'x = 5\ndel x\nx', { name: 'NameError', message: "name 'x' is not defined" }),
  e('del an item then index', 'x = [1, 2, 3]\ndel x[2]\nx[2]', {
    name: 'IndexError',
    message: 'list index out of range',
  }),
  e('del an undefined name', 'del x', { name: 'NameError', message: "name 'x' is not defined" }),
  v(
    'non-standard __eq__',
    "class R:\n    def __init__(self, l, r):\n        self.l, self.r = l, r\n    def __str__(self):\n        return f'{self.l} == {self.r}'\nclass C:\n    def __init__(self, v):\n        self.v = v\n    def __str__(self):\n        return self.v\n    def __eq__(self, other):\n        return R(self, other)\nresult = str(C('a') == C('b'))",
    'a == b',
  ),
  v('result = 2 + 2', 'result = 2 + 2', 4),
  v('call from a dict', 'def foo():\n    return 11\nd = {"foo": foo}\nd["foo"]()', 11),
  v('chained assignment', 'def foo():\n    return 1\na = b = foo(); b', 1),
  e('unpack too many', 'a, b = 1, 2, 3; a', { name: 'ValueError', message: 'too many values to unpack' }),
  v('isinstance of a builtin type', 'isinstance(5, int)', true),
  e(
    'a function as the result',
    'def target_function():\n    return "Hello world"\nfinal_answer(target_function)',
    { code: 'RESULT_INVALID', message: 'function' },
  ),
  // smolagents' tools are bare functions; codecall's are under tools. (tools.add_two(x=3)).
  e('a tool called as a bare function', 'y = add_two(3)', {
    name: 'NameError',
    message: 'call it as tools.add_two(...)',
  }),
  v('the tool called as codecall has it', 'y = tools.add_two(x=3)', 5),
  // What smolagents refuses, the sandbox refuses too (processes, the host's files), or confines.
  e('os.system', "import os; os.system(':')", { name: 'PermissionError', message: 'allow_subprocesses' }),
  e('os.popen', "import os; os.popen('ls').read()", {
    name: 'PermissionError',
    message: 'allow_subprocesses',
  }),
  e('subprocess via asyncio', 'import asyncio; asyncio.base_events.events.subprocess.run(["ls"])', {
    name: 'PermissionError',
    message: 'allow_subprocesses',
  }),
  e('os via importlib', "import importlib\nimportlib.import_module('os').system(':')", {
    name: 'PermissionError',
    message: 'allow_subprocesses',
  }),
  e('os via random._os', "import random; random._os.system(':')", {
    name: 'PermissionError',
    message: 'allow_subprocesses',
  }),
  e('os via sys.modules', "import queue; queue.threading._sys.modules['os'].system(':')", {
    name: 'PermissionError',
    message: 'allow_subprocesses',
  }),
  e('exec of compiled os import', "exec(compile('import os; os.system(\":\")', 'no filename', 'exec'))", {
    name: 'PermissionError',
    message: 'allow_subprocesses',
  }),
  e('the host password file', "open('/etc/passwd').read()", {
    name: 'FileNotFoundError',
    message: '/etc/passwd',
  }),
  e('an endless loop', 'i = 0\nwhile i < 3:\n    i -= 1\ni', { code: 'TIMEOUT', message: '' }),
];
