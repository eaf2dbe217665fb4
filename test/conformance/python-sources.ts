/**
 * What a Python program can read that would differ between a first run and its replay (issue 15, class 2), one
 * expression per source, each giving a str. The conformance group (conformance-determinism-sources.ts) and the
 * durable test (test/durable/python-determinism.test.ts) read each of them.
 */
export const PYTHON_SOURCES: Readonly<Record<string, string>> = {
  'time.time_ns': 'str(__import__("time").time_ns())',
  'time.perf_counter_ns': 'str(__import__("time").perf_counter_ns())',
  'time.monotonic_ns': 'str(__import__("time").monotonic_ns())',
  'time.process_time': 'str(__import__("time").process_time())',
  'time.thread_time_ns': 'str(__import__("time").thread_time_ns())',
  'time.clock_gettime (every clock id)':
    'str([__import__("time").clock_gettime_ns(c) for c in (0, 1, 2, 3, 4, 5, 6, 7, 9, 11)])',
  'time.localtime/gmtime/strftime/ctime/asctime':
    'str([tuple(__import__("time").localtime()), tuple(__import__("time").gmtime()), __import__("time").strftime("%c"), __import__("time").ctime(), __import__("time").asctime()])',
  'os.times': 'str(tuple(__import__("os").times()))',
  'resource.getrusage': 'str(tuple(__import__("resource").getrusage(__import__("resource").RUSAGE_SELF)))',
  'datetime.now/utcnow/today':
    'str([__import__("datetime").datetime.now(), __import__("datetime").datetime.utcnow(), __import__("datetime").date.today()])',
  // The runner's own _datetime, reached without an import (datetime itself is not loaded until imported).
  'datetime through sys.modules': 'str(__import__("sys").modules["_datetime"].datetime.now())',
  'datetime through _datetime': 'str(__import__("_datetime").datetime.now())',
  'datetime through importlib': 'str(__import__("importlib").import_module("datetime").datetime.now())',
  'datetime through the real builtins': 'str(print.__self__.__import__("datetime").datetime.today())',
  "datetime through an object's type": 'str(type(__import__("datetime").datetime.min).now())',
  'os.getrandom': '__import__("os").getrandom(16).hex()',
  'os.urandom': '__import__("os").urandom(16).hex()',
  '/dev/urandom': 'open("/dev/urandom", "rb").read(16).hex()',
  '/dev/random': 'open("/dev/random", "rb").read(16).hex()',
  '/proc/sys/kernel/random/uuid': 'open("/proc/sys/kernel/random/uuid").read()',
  'uuid1 and uuid4': 'str([__import__("uuid").uuid1(), __import__("uuid").uuid4()])',
  'tempfile names':
    'str([__import__("tempfile").mktemp(), __import__("tempfile").NamedTemporaryFile().name])',
  'unseeded random.Random and SystemRandom':
    'str([__import__("random").Random().random(), __import__("random").SystemRandom().random()])',
};

/** A program that reads `expr` before and after a tool call (the clock moves at its outcome). */
export function readTwice(expr: string): string {
  return `first = ${expr}\ntools.echo()\nsecond = ${expr}\n[first, second]`;
}
