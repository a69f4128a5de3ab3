// Front-end validation rules (language.md, checking.md "Diagnostics"): for
// every rule a small program whose diagnostics are compared EXACTLY (nothing
// missing, nothing extra) with the expected ones: code, range and a message
// that says what is wrong and what to do. Expected ranges are computed from
// the program text with `at`/`err` (the needle, or the needle inside a
// unique context), so each test shows what it points at.
//
// Tests marked `todo: 'defect: ...'` state the correct behaviour of a rule
// the implementation gets wrong today (see the report of the test author).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnosticsOf, frontEnd } from '../util/frontend.js';
import { at, compareDiagnostics, err, expectClean, expectDiagnostics, expectWorkspaceDiagnostics } from './expect-diagnostics.js';

/** Programs are raw strings, so that `\old`, `\result` and `\forall` need no escaping. */
const cv = String.raw;

/** The 1-based line of the unique text `needle` in `src`. */
const lineOf = (src: string, needle: string): number => at(src, needle).line;

// ======================================================================= typing

describe('typing of expressions', () => {
    it('arithmetic and comparison operands must be int', async () => {
        const src = `
thread T {
  int a = 1 + true;
  int b = false * 2;
  int c = -true;
  boolean d = true < 1;
  int e = 7 % false;
  boolean f = 1 >= 2 && 3 <= 4 && 5 > 6 && 7 - 8 / 9 < 10;
}`;
        await expectDiagnostics(src, [
            err(src, 'true', 'type', /right operand of '\+' must be int, but this expression is boolean/, { in: '1 + true' }),
            err(src, 'false', 'type', /left operand of '\*' must be int, but this expression is boolean/, { in: 'false * 2' }),
            err(src, 'true', 'type', /operand of unary '-' must be int, but this expression is boolean/, { in: '-true' }),
            err(src, 'true', 'type', /left operand of '<' must be int, but this expression is boolean/, { in: 'true < 1' }),
            err(src, 'false', 'type', /right operand of '%' must be int/, { in: '7 % false' }),
        ]);
    });

    it('logical operands must be boolean (also ==> and <==> in annotations)', async () => {
        const src = `
thread T {
  boolean a = 1 && true;
  boolean b = false || 0;
  boolean c = !3;
  int i = 0;
  //@ assert i ==> true;
  //@ assert true <==> 2;
}`;
        await expectDiagnostics(src, [
            err(src, '1', 'type', /left operand of '&&' must be boolean, but this expression is int/, { in: '1 && true' }),
            err(src, '0', 'type', /right operand of '\|\|' must be boolean, but this expression is int/, { in: 'false || 0' }),
            err(src, '3', 'type', /operand of '!' must be boolean, but this expression is int/, { in: '!3' }),
            err(src, 'i', 'type', /left operand of '==>' must be boolean/, { in: 'i ==> true' }),
            err(src, '2', 'type', /right operand of '<==>' must be boolean/, { in: 'true <==> 2' }),
        ]);
    });

    it('== and != need operands of the same type (or a reference and null)', async () => {
        const src = `
class C { }
class D { }
thread T {
  C c = new C();
  D d = new D();
  int[] ia = new int[1];
  boolean[] ba = new boolean[1];
  boolean r1 = c == 1;
  boolean r2 = true != 1;
  boolean r3 = c == d;
  boolean r4 = ia == ba;
  boolean r5 = 0 == null;
  boolean ok1 = c == null;
  boolean ok2 = null != ia;
  boolean ok3 = c != c && 1 == 2 && true == false && null == null;
}`;
        const same = /both sides must have the same type/;
        await expectDiagnostics(src, [
            err(src, 'c == 1', 'type', /Cannot compare C with int using '=='/),
            err(src, 'true != 1', 'type', /Cannot compare boolean with int using '!='/),
            err(src, 'c == d', 'type', /Cannot compare C with D/),
            err(src, 'ia == ba', 'type', /Cannot compare int\[\] with boolean\[\]/),
            err(src, '0 == null', 'type', /Cannot compare int with null/),
        ]);
        const diags = await diagnosticsOf(src);
        for (const d of diags) assert.match(d.message, same);
    });

    it('conditions of if, while, for, assert and ?: must be boolean; ?: branches must agree', async () => {
        const src = `
thread T {
  int n = 1;
  if (n) { }
  while (n + 1) { }
  for (int i = 0; i; i++) { }
  assert n;
  int k = n ? 1 : 2;
  int kk = true ? 1 : false;
  int ok = true ? 1 : 2;
}`;
        await expectDiagnostics(src, [
            err(src, 'n', 'type', /condition of 'if' must be boolean, but this expression is int/, { in: 'if (n)' }),
            err(src, 'n + 1', 'type', /condition of 'while' must be boolean, but this expression is int/),
            err(src, 'i', 'type', /condition of 'for' must be boolean, but this expression is int/, { in: '; i;' }),
            err(src, 'n', 'type', /An assertion must be boolean, but this expression is int/, { in: 'assert n;' }),
            err(src, 'n', 'type', /condition of '\?:' must be boolean, but this expression is int/, { in: 'n ? 1 : 2' }),
            err(src, 'true ? 1 : false', 'type', /branches of '\?:' have different types \(int and boolean\)/),
        ]);
    });

    it('annotation conditions and actions must be boolean', async () => {
        const src = `
int x = 0;
//@ invariant x;
//@ environment 1;
//@ writable_if x + 1;
int y = 0;
//@ requires 0; ensures x;
void m() { }
//@ abstraction { requires 1; step [x] 2; stutter [] 3; ensures 4; }
void n() { }
thread T {
  //@ loop_invariant x;
  while (true) { }
  //@ assert 1;
  //@ assume 2;
}`;
        const isInt = (what: string) => new RegExp(`^${what} must be boolean, but this expression is int`);
        await expectDiagnostics(src, [
            err(src, 'x', 'type', isInt('An invariant'), { in: '//@ invariant x;' }),
            err(src, '1', 'type', isInt('An environment action'), { in: 'environment 1' }),
            err(src, 'x + 1', 'type', isInt('A writable_if condition')),
            err(src, '0', 'type', isInt('A precondition'), { in: 'requires 0' }),
            err(src, 'x', 'type', isInt('A postcondition'), { in: 'ensures x' }),
            err(src, '1', 'type', isInt('A precondition'), { in: 'requires 1' }),
            err(src, '2', 'type', isInt('An abstraction step'), { in: 'step [x] 2' }),
            err(src, '3', 'type', isInt('A stutter action'), { in: 'stutter [] 3' }),
            err(src, '4', 'type', isInt('A postcondition'), { in: 'ensures 4' }),
            err(src, 'x', 'type', isInt('A loop invariant'), { in: 'loop_invariant x' }),
            err(src, '1', 'type', isInt('An assertion'), { in: 'assert 1' }),
            err(src, '2', 'type', isInt('An assumption'), { in: 'assume 2' }),
        ]);
    });

    it('quantifier ranges and bodies must be boolean; a quantified variable cannot be void', async () => {
        const src = cv`
thread T {
  //@ assert (\forall int i; i; i == 0) && (\exists void j; true) && (\forall int k; 0 <= k; k + 1);
}`;
        await expectDiagnostics(src, [
            err(src, 'i', 'type', /range of a quantifier must be boolean, but this expression is int/, { in: 'int i; i;' , nth: 3 }),
            err(src, 'void j', 'type', /quantified variable cannot be void/),
            err(src, 'k + 1', 'type', /body of a quantifier must be boolean, but this expression is int/),
        ]);
    });

    it('assignments need a value of the target type; ++, --, +=, -= need ints', async () => {
        const src = `
class C { int f; }
thread T {
  C c = new C();
  int n = 0;
  boolean b = false;
  c = 3;
  n = null;
  b = n;
  c.f = true;
  n += true;
  b++;
  b -= 1;
  n--;
}`;
        await expectDiagnostics(src, [
            err(src, '3', 'type', /value assigned must be C, but this expression is int/, { in: 'c = 3' }),
            err(src, 'null', 'type', /value assigned must be int, but this expression is null/, { in: 'n = null' }),
            err(src, 'n', 'type', /value assigned must be boolean, but this expression is int/, { in: 'b = n;' }),
            err(src, 'true', 'type', /value assigned must be int, but this expression is boolean/, { in: 'c.f = true' }),
            err(src, 'true', 'type', /right side of '\+=' must be int/, { in: 'n += true' }),
            err(src, 'b', 'type', /'\+\+' needs an int variable, but this is boolean/, { in: 'b++' }),
            err(src, 'b', 'type', /'-=' needs an int variable, but this is boolean/, { in: 'b -= 1' }),
        ]);
    });

    it('initializers of globals, fields and locals must have the declared type', async () => {
        const src = `
class C { boolean flag = 0; static int count = false; }
int g = true;
C gc = 5;
int[] arr = new boolean[2];
thread T { C c = new C(); int x = c; }`;
        await expectDiagnostics(src, [
            err(src, '0', 'type', /initial value of 'flag' must be boolean, but this expression is int/, { in: 'flag = 0' }),
            err(src, 'false', 'type', /initial value of 'count' must be int, but this expression is boolean/),
            err(src, 'true', 'type', /initial value of 'g' must be int, but this expression is boolean/),
            err(src, '5', 'type', /initial value of 'gc' must be C, but this expression is int/),
            err(src, 'new boolean[2]', 'type', /initial value of 'arr' must be int\[\], but this expression is boolean\[\]/),
            err(src, 'c', 'type', /initial value of 'x' must be int, but this expression is C/, { in: 'int x = c;' }),
        ]);
    });

    it('calls need the right number and types of arguments', async () => {
        const src = `
class C { int m(int a, boolean b) { return a; } }
void p(C c) { }
thread T {
  C c = new C();
  int r1 = c.m(1);
  int r2 = c.m(true, 1);
  p();
  p(c, c);
  p(3);
  int ok = c.m(2, false);
  p(c);
}`;
        await expectDiagnostics(src, [
            err(src, 'c.m(1)', 'type', /'m' takes 2 arguments, but 1 is given/),
            err(src, 'true', 'type', /Argument 1 of 'm' \(parameter 'a'\) must be int, but this expression is boolean/, { in: 'c.m(true, 1)' }),
            err(src, '1', 'type', /Argument 2 of 'm' \(parameter 'b'\) must be boolean, but this expression is int/, { in: 'c.m(true, 1)' }),
            err(src, 'p()', 'type', /'p' takes 1 argument, but 0 are given/),
            err(src, 'p(c, c)', 'type', /'p' takes 1 argument, but 2 are given/),
            err(src, '3', 'type', /Argument 1 of 'p' \(parameter 'c'\) must be C, but this expression is int/, { in: 'p(3)' }),
        ]);
    });

    it('a name that is not a method cannot be called, and a method must be called', async () => {
        const src = `
int x = 0;
void m() { }
thread T { int a = x(); int b = m; m(); }`;
        await expectDiagnostics(src, [
            err(src, 'x()', 'type', /'x' is not a method and cannot be called/),
            err(src, 'm', 'type', /'m' is a method: call it with 'm\(\.\.\.\)'/, { in: 'int b = m;' }),
        ]);
    });

    it('return values: type, void methods, missing values, threads', async () => {
        const src = `
int g() { return true; }
void h() { return 1; }
int i() { return; }
void ok() { return; }
thread T { return 2; }`;
        await expectDiagnostics(src, [
            err(src, 'true', 'type', /value returned by 'g' must be int, but this expression is boolean/),
            err(src, '1', 'type', /'h' is void and cannot return a value; write 'return;' or change its return type/, { in: 'return 1' }),
            err(src, 'return;', 'type', /'i' must return a value of type int/, { in: 'int i() { return; }' }),
            err(src, '2', 'type', /thread body cannot return a value; write 'return;'/, { in: 'return 2' }),
        ]);
    });

    it('only arrays can be indexed, with int indexes', async () => {
        const src = `
thread T {
  int x = 0;
  int[] a = new int[3];
  int w = x[0];
  int v = a[true];
  boolean[] bs = new boolean[2];
  int u = a[bs[0] ? 1 : 0] + a.length;
}`;
        await expectDiagnostics(src, [
            err(src, 'x', 'type', /Only arrays can be indexed, but this expression is int/, { in: 'x[0]' }),
            err(src, 'true', 'type', /An array index must be int, but this expression is boolean/),
        ]);
    });

    it('new: only classes with (), array sizes must be int', async () => {
        const src = `
class C { }
thread T {
  int n = new int();
  boolean b = new boolean();
  int[] a = new int[false];
  int[][] m = new int[2][];
  C[] cs = new C[n];
  C c = new C();
}`;
        await expectDiagnostics(src, [
            err(src, 'new int()', 'type', /'new int\(\)' is not allowed: only classes are created with 'new C\(\)'; arrays with 'new T\[n\]'/),
            err(src, 'new boolean()', 'type', /'new boolean\(\)' is not allowed/),
            err(src, 'false', 'type', /An array size must be int, but this expression is boolean/),
        ]);
    });

    it('an ill-formed new is reported once (no follow-up type error)', async () => {
        const src = `
class C { }
thread T {
  C c = new int();
  int[] e = new void[3];
}`;
        await expectDiagnostics(src, [
            err(src, 'new int()', 'type', /'new int\(\)' is not allowed/),
            err(src, 'new void[3]', 'type', /Arrays of void do not exist/),
        ]);
    });

    it('synchronized needs an object or array', async () => {
        const src = `
class C { }
thread T {
  int x = 0;
  synchronized (x) { }
  synchronized (true) { }
  synchronized (null) { }
  C c = new C();
  synchronized (c) { }
  int[] a = new int[1];
  synchronized (a) { }
}`;
        await expectDiagnostics(src, [
            err(src, 'x', 'type', /synchronized needs an object or array to lock, but this expression is int/, { in: 'synchronized (x)' }),
            err(src, 'true', 'type', /synchronized needs an object or array to lock, but this expression is boolean/),
            err(src, 'null', 'type', /synchronized needs an object or array to lock, but this expression is null/, { in: 'synchronized (null)' }),
        ]);
    });

    it('.f on an int or boolean is one type error', async () => {
        const src = `
thread T {
  int x = 0;
  int u = x.f;
  boolean b = true;
  int v = b.length;
}`;
        await expectDiagnostics(src, [
            err(src, 'x', 'type', /A value of type int has no members; '\.f' needs an object or array/, { in: 'x.f' }),
            err(src, 'b', 'type', /A value of type boolean has no members; '\.length' needs an object or array/, { in: 'b.length' }),
        ]);
    });

    it('C.f and C.m() need static members', async () => {
        const src = `
class C { int f; static int s; int m() { return 0; } static int sm() { return 0; } }
thread T {
  int q = C.f;
  int r = C.m();
  int ok = C.s + C.sm();
}`;
        await expectDiagnostics(src, [
            err(src, 'f', 'type', /'f' is an instance member of C; use an object \(e\.g\. 'o\.f'\), or declare it static/, { in: 'C.f;' }),
            err(src, 'm', 'type', /'m' is an instance member of C; use an object \(e\.g\. 'o\.m'\), or declare it static/, { in: 'C.m()' }),
        ]);
    });

    it('this and instance members are not available in static code (threads, procedures, static methods and fields, top-level annotations)', async () => {
        const src = `
//@ invariant this != null;
class C {
  static C s = this;
  int f;
  C self() { return this; }
  static C make() { return this; }
  static int g() { return f; }
}
void p() { C c = this; }
thread T { C c = this; }`;
        const noThis = /'this' is not available here: the code is static \(a thread, a top-level procedure, a static method or field\)/;
        await expectDiagnostics(src, [
            err(src, 'this', 'type', noThis, { in: '//@ invariant this !=' }),
            err(src, 'this', 'type', noThis, { in: 's = this' }),
            err(src, 'this', 'type', noThis, { in: 'make() { return this; }' }),
            err(src, 'this', 'type', noThis, { in: 'void p() { C c = this; }' }),
            err(src, 'this', 'type', noThis, { in: 'thread T { C c = this; }' }),
            err(src, 'f', 'type', /Instance member 'f' cannot be used here without an object: this code is static \(use 'o\.f' or make it static\)/, { in: 'return f;' }),
        ]);
    });

    it('class invariants and environments are about this, also when written before a static method', async () => {
        await expectClean(`
class C {
  int f;
  //@ invariant this.f >= 0;
  //@ environment f' == f;
  static void s() { }
}
thread T { C.s(); }`);
    });

    it('variables cannot be void', async () => {
        const src = `
void g;
class C { void f; void[] va; void m(void p) { } }
thread T { void v; void[][] vv; }`;
        const msg = /A variable cannot have type void; use int, boolean, a class or an array type/;
        await expectDiagnostics(src, [
            err(src, 'void', 'type', msg, { in: 'void g;' }),
            err(src, 'void', 'type', msg, { in: 'void f;' }),
            err(src, 'void[]', 'type', msg, { in: 'void[] va' }),
            err(src, 'void', 'type', msg, { in: 'void p)' }),
            err(src, 'void', 'type', msg, { in: 'void v;' }),
            err(src, 'void[][]', 'type', msg),
        ]);
    });

    it('expression statements must be calls or cas ("not a statement")', async () => {
        const src = `
int g = 0;
class C { int f; }
void p() { }
thread T {
  int x = 0;
  C c = new C();
  x + 1;
  x;
  c.f;
  true;
  nondet();
  p();
  cas(g, 0, 1);
}`;
        const msg = /Not a statement: only calls and cas\(\.\.\.\) can stand alone; assign the value or remove it/;
        await expectDiagnostics(src, [
            err(src, 'x + 1;', 'type', msg),
            err(src, 'x;', 'type', msg, { in: '  x;\n' }),
            err(src, 'c.f;', 'type', msg),
            err(src, 'true;', 'type', msg),
            err(src, 'nondet();', 'type', msg),
        ]);
    });

    it('modifiers: no synchronized/final/volatile misuse, no repeats, final fields need an initializer', async () => {
        const src = `
synchronized void p() { }
class C {
  volatile void m() { }
  final void n() { }
  synchronized int f;
  final volatile int g = 0;
  static static int s;
  final int k;
  static synchronized void q() { }
}`;
        await expectDiagnostics(src, [
            err(src, 'synchronized', 'type', /top-level procedure has no object to lock; use a synchronized block on a shared object instead/, { in: 'synchronized void p' }),
            err(src, 'volatile', 'type', /Methods cannot be volatile/, { in: 'volatile void m' }),
            err(src, 'final', 'type', /Methods cannot be final/, { in: 'final void n' }),
            err(src, 'synchronized', 'type', /Fields cannot be synchronized; only methods and blocks can/, { in: 'synchronized int f' }),
            err(src, 'final', 'type', /A field cannot be both final and volatile/, { in: 'final volatile' }),
            err(src, 'static', 'syntax', /Modifier 'static' is repeated/, { in: 'static static', nth: 2 }),
            err(src, 'k', 'type', /Final field 'k' needs an initializer: it can only be assigned there/, { in: 'final int k;' }),
            err(src, 'static', 'type', /A static method has no object to lock \(Calvin has no class objects\); use a synchronized block on an object a static final field references instead/, { in: 'static synchronized void q' }),
        ]);
    });
});

// ======================================================================= primes, \old, \result

describe('primed names, \\old and \\result', () => {
    it('a prime is an error in requires, ensures, invariant, writable_if, loop_invariant, assert and assume', async () => {
        const src = `
int x = 0;
//@ invariant x' == 0;
//@ writable_if x' >= 0;
int y = 0;
//@ requires x' == 1;
//@ ensures x' == 1;
void p() { }
/*@ abstraction { requires x' == 0; step [x] x' == 1; ensures x' == 2; } */
void q() { }
thread T {
  //@ assert x' == 0;
  //@ assume x' == 0;
  //@ loop_invariant x' >= 0;
  while (true) { }
}`;
        const msg = /primed name \(post-state value\) is only allowed in two-state actions: 'environment', 'step' and 'stutter'/;
        await expectDiagnostics(src, [
            "invariant x' == 0", "writable_if x'", "requires x' == 1", "ensures x' == 1", "requires x' == 0",
            "ensures x' == 2", "assert x'", "assume x'", "loop_invariant x'",
        ].map(ctx => err(src, "x'", 'type', msg, { in: ctx })));
    });

    it("primes are fine in environment, step and stutter, on shared locations only", async () => {
        const src = `
int x = 0;
//@ environment x' >= x;
class C {
  int f;
  int[] a;
  //@ environment f' == f && a[0]' == a[0] && this.f' == this.f;
  /*@ abstraction { stutter [f] f' == f; step [this.f] this.f' == f + 1; } */
  void m(int p) { }
  //@ abstraction { step [x] p' == 1; }
  void n(int p) { }
}`;
        await expectDiagnostics(src, [
            err(src, "p'", 'type', /Only shared variables \(fields and globals\) have a post-state value; 'p'' is not one/),
        ]);
    });

    it('a prime outside annotations is a syntax error', async () => {
        const src = `
int x = 0;
thread T { int y = x'; }`;
        await expectDiagnostics(src, [
            err(src, "'", 'syntax', /primes \(x'\) are only allowed inside annotations, right after a name/),
        ]);
    });

    it('\\old and \\result are only allowed in ensures', async () => {
        const src = cv`
int x = 0;
//@ requires \old(x) == 0;
//@ ensures \old(x) == 0 && \result == 1;
int f() { return 1; }
/*@ abstraction { requires \result == 0; step [x] \old(x) == x'; ensures \result == \old(x); } */
int g() { return 0; }
//@ invariant \result == 0 || \old(x) == 0;
thread T {
  //@ assert \old(x) == x;
}`;
        const old = /'\\old' is only allowed in 'ensures' clauses/;
        const result = /'\\result' is only allowed in 'ensures' clauses/;
        await expectDiagnostics(src, [
            err(src, cv`\old(x)`, 'type', old, { in: cv`requires \old(x)` }),
            err(src, cv`\result`, 'type', result, { in: cv`requires \result` }),
            err(src, cv`\old(x)`, 'type', old, { in: cv`step [x] \old(x)` }),
            err(src, cv`\result`, 'type', result, { in: cv`invariant \result` }),
            err(src, cv`\old(x)`, 'type', old, { in: cv`|| \old(x)` }),
            err(src, cv`\old(x)`, 'type', old, { in: cv`assert \old(x)` }),
        ]);
    });

    it("\\result in a void method's ensures is one error", async () => {
        const src = cv`
//@ ensures \result == 1;
void g() { }
/*@ abstraction { ensures \result; } */
void h() { }`;
        await expectDiagnostics(src, [
            err(src, cv`\result`, 'type', /'g' is void, so its 'ensures' cannot mention '\\result'/, { in: cv`\result == 1` }),
            err(src, cv`\result`, 'type', /'h' is void, so its 'ensures' cannot mention '\\result'/, { in: cv`ensures \result;` }),
        ]);
    });

    it('\\old outside annotations is one error', async () => {
        const src = cv`
int x = 0;
thread T { int y = \old(x); }`;
        const d = await diagnosticsOf(src);
        assert.equal(d.length, 1, JSON.stringify(d));
        assert.equal(d[0].line, at(src, '\\').line);
        assert.equal(d[0].column, at(src, '\\').column);
        assert.match(d[0].code, /^(syntax|type)$/);
        assert.match(d[0].message, /only allowed in(side)? (annotations|'ensures')/);
    });
});

// ======================================================================= purity, quantifiers

describe('annotation expressions are side-effect free; quantifiers only in annotations', () => {
    it('calls, new, cas and nondet() in annotations are errors', async () => {
        const src = `
int x = 0;
int f() { return 1; }
class C { int g() { return 0; } }
final C c = new C();
//@ invariant f() == 1;
//@ invariant c.g() == 0;
//@ invariant new C() != null;
//@ invariant cas(x, 0, 1);
//@ invariant nondet();
/*@ abstraction { step [x] x' == f(); } */
void p() { }
thread T {
  //@ assert f() > 0 && nondet();
}`;
        const call = /Annotations must be side-effect free: calls are not allowed here; state the property over fields and variables/;
        const nondet = /'nondet\(\)' is not allowed in annotations; use a quantifier to speak of any value/;
        await expectDiagnostics(src, [
            err(src, 'f()', 'type', call, { in: 'invariant f()' }),
            err(src, 'c.g()', 'type', call, { in: 'invariant c.g()' }),
            err(src, 'new C()', 'type', /Annotations must be side-effect free: 'new' is not allowed here/, { in: 'invariant new C()' }),
            err(src, 'cas(x, 0, 1)', 'type', /Annotations must be side-effect free: 'cas' is not allowed here/),
            err(src, 'nondet()', 'type', nondet, { in: 'invariant nondet()' }),
            err(src, 'f()', 'type', call, { in: "x' == f()" }),
            err(src, 'f()', 'type', call, { in: 'assert f()' }),
            err(src, 'nondet()', 'type', nondet, { in: '&& nondet()' }),
        ]);
    });

    it("'new' for a ghost field's value says that ghost code allocates nothing (ghost arrays are not supported)", async () => {
        const src = `
int[] a = new int[8];
//@ ghost int[] g = new int[8];
//@ ghost int[] h;
thread T {
  //@ set h = new int[2];
  //@ set h = a;
}`;
        const ghost = /^Ghost code allocates nothing: 'new' cannot give a ghost field its value \(ghost arrays and objects are not supported; a ghost field holds an int, a boolean, or a reference to a real object\)\.$/;
        await expectDiagnostics(src, [
            err(src, 'new int[8]', 'type', ghost, { in: 'g = new int[8]' }),
            err(src, 'new int[2]', 'type', ghost),
        ]);
    });

    it('a quantifier in code is one error saying quantifiers belong in annotations', async () => {
        const src = cv`
thread T { boolean b = (\forall int i; i == i); int k = 0; }`;
        const d = await diagnosticsOf(src);
        assert.equal(d.length, 1, JSON.stringify(d));
        assert.equal(d[0].line, at(src, cv`(\forall`).line);
        assert.ok(d[0].column === at(src, cv`(\forall`).column || d[0].column === at(src, cv`\forall`).column, JSON.stringify(d[0]));
        assert.match(d[0].code, /^(syntax|type)$/);
        assert.match(d[0].message, /[Qq]uantifiers.*only allowed in(side)? annotations|\\forall.*only allowed in(side)? annotations/);
    });
});

// ======================================================================= atomic

describe('atomic blocks', () => {
    it('no loops, calls, synchronized or return inside; break and continue cannot leave it', async () => {
        const src = `
int x = 0;
void p() { }
class C { void m() { } }
thread T {
  C c = new C();
  atomic {
    while (x > 0) { }
    for (;;) { }
    p();
    c.m();
    synchronized (c) { }
    return;
  }
  while (true) {
    atomic { break; }
    atomic { if (x == 0) { continue; } }
  }
}`;
        const call = /Calls are not allowed in an atomic block; inline the code or give the callee an abstraction and call it outside/;
        await expectDiagnostics(src, [
            err(src, 'while (x > 0) { }', 'type', /Loops are not allowed in an atomic block: it must run as one step/),
            err(src, 'for (;;) { }', 'type', /Loops are not allowed in an atomic block/),
            err(src, 'p()', 'type', call, { in: '    p();' }),
            err(src, 'c.m()', 'type', call, { in: '    c.m();' }),
            err(src, 'synchronized (c) { }', 'type', /'synchronized' is not allowed in an atomic block/),
            err(src, 'return;', 'type', /'return' is not allowed in an atomic block/),
            err(src, 'break;', 'type', /'break' cannot leave an atomic block/),
            err(src, 'continue;', 'type', /'continue' cannot leave an atomic block/),
        ]);
    });

    it('assignments, if, assume, assert and set are fine inside', async () => {
        await expectClean(`
int m = 0;
//@ ghost int owner = 0;
thread T[*] {
  atomic {
    //@ assume m == 0;
    m = tid;
    //@ set owner = tid;
    if (m > 0) { m = m + 0; } else { m = tid; }
    { int local = m; }
    //@ assert m == tid;
  }
  while (true) { atomic { m = 0; } if (nondet()) { break; } }
}`);
    });
});

// ======================================================================= ghost state

describe('ghost fields and set', () => {
    it('set only updates ghost fields, with a value of their type', async () => {
        const src = `
int x = 0;
//@ ghost int g = 0;
class C { int f; }
thread T {
  C c = new C();
  //@ set x = 1;
  //@ set c.f = 1;
  //@ set g = true;
  //@ set g = 2;
}`;
        await expectDiagnostics(src, [
            err(src, 'x', 'type', /'set' only updates ghost fields, and 'x' is not one; use an ordinary assignment for program variables/, { in: 'set x' }),
            err(src, 'c.f', 'type', /'set' only updates ghost fields, and 'f' is not one; use an ordinary assignment/),
            err(src, 'true', 'type', /The value of 'g' must be int, but this expression is boolean/),
        ]);
    });

    it("set o.holder is an error whose message says that only synchronized code changes holder", async () => {
        const src = `
class C { }
thread T {
  C c = new C();
  //@ set c.holder = 1;
}`;
        await expectDiagnostics(src, [
            err(src, 'c.holder', 'type', /^(?!.*ordinary assignment).*holder.*synchronized/),
        ]);
    });

    it('program code cannot read or write ghost fields, nor o.holder', async () => {
        const src = `
//@ ghost int g = 0;
void use(int v) { }
class C {
  //@ ghost boolean h;
  int f;
  void m() { int k = holder; }
}
int copy = g;
thread T {
  C c = new C();
  int a = g;
  g = 1;
  boolean b = c.h;
  c.h = false;
  int d = c.holder;
  c.holder = 1;
  use(g);
}`;
        const read = (name: string) => new RegExp(`Ghost field '${name}' can only be used in annotations; program code cannot read or write it`);
        await expectDiagnostics(src, [
            err(src, 'holder', 'type', read('holder'), { in: 'k = holder' }),
            err(src, 'g', 'type', read('g'), { in: 'copy = g' }),
            err(src, 'g', 'type', read('g'), { in: 'int a = g' }),
            err(src, 'g', 'type', /Ghost field 'g' is updated with '\/\/@ set g = \.\.\.;', not by program code/, { in: '  g = 1;' }),
            err(src, 'c.h', 'type', read('h'), { in: 'b = c.h' }),
            err(src, 'c.h', 'type', /Ghost field 'h' is updated with '\/\/@ set h = \.\.\.;'/, { in: 'c.h = false' }),
            err(src, 'c.holder', 'type', read('holder'), { in: 'int d = c.holder' }),
            err(src, 'c.holder', 'type', /'holder' is changed only by entering and leaving synchronized code; it cannot be assigned/, { in: 'c.holder = 1' }),
            err(src, 'g', 'type', read('g'), { in: 'use(g)' }),
        ]);
    });

    it('ghost fields and o.holder in annotations are fine', async () => {
        await expectClean(`
//@ ghost int g = 0;
//@ ghost int g2 = g + 1;
class C {
  //@ ghost boolean h = false;
  //@ invariant h ==> this.holder != 0;
  synchronized void m() {
    //@ set h = true;
    //@ assert this.holder == tid && h;
    //@ set h = false;
  }
}
final C c = new C();
//@ invariant g >= 0 && c.holder >= 0;
thread T { c.m(); //@ set g = g + 1;
}`);
    });
});

// ======================================================================= placement

describe('where clauses may be written', () => {
    it('writable_if only directly before a field; requires/ensures/abstraction only before a method; loop_invariant only before a loop', async () => {
        const src = `
//@ writable_if true;
void p() { }
//@ requires true;
int x = 0;
//@ ensures true;
thread T { }
//@ abstraction { step [x] true; }
int y = 0;
class C {
  //@ writable_if true;
  void m() { }
  //@ requires true;
  int f;
  //@ writable_if false;
}
//@ loop_invariant true;
thread U {
  //@ loop_invariant x >= 0;
  int z = 0;
  //@ loop_invariant z < 3;
  while (z < 3) { z++; }
  //@ loop_invariant z == 3;
}`;
        const wif = /'writable_if' must be written directly before the field it protects/;
        await expectDiagnostics(src, [
            err(src, 'writable_if true', 'type', wif, { in: '//@ writable_if true;\nvoid p' }),
            err(src, 'requires true', 'type', /'requires' must be written directly before a method or procedure/, { in: '//@ requires true;\nint x' }),
            err(src, 'ensures true', 'type', /'ensures' must be written directly before a method or procedure/),
            err(src, 'abstraction { step [x] true; }', 'type', /'abstraction' must be written directly before a method or procedure/),
            err(src, 'writable_if true', 'type', wif, { in: '  //@ writable_if true;\n  void m' }),
            err(src, 'requires true', 'type', /'requires' must be written directly before a method or procedure/, { in: '  //@ requires true;\n  int f' }),
            err(src, 'writable_if false', 'type', wif),
            err(src, 'loop_invariant true', 'type', /'loop_invariant' is not allowed at the top level; it belongs among statements/),
            err(src, 'loop_invariant x >= 0', 'type', /'loop_invariant' must be written directly before a 'while' or 'for' loop/),
            err(src, 'loop_invariant z == 3', 'type', /'loop_invariant' must be written directly before a 'while' or 'for' loop/),
        ]);
    });

    it('statement clauses are not allowed at class or top level; class clauses are not allowed among statements', async () => {
        const src = `
//@ ghost int gg;
//@ assert true;
//@ assume true;
//@ set gg = 1;
//@ witness step 1;
class C {
  //@ assert false;
  //@ assume false;
  //@ set gg = 2;
  //@ witness step 2;
  int f;
}
thread T {
  //@ invariant true;
  //@ environment true;
  //@ ghost int g;
  //@ writable_if true;
  //@ requires true;
  //@ ensures true;
  //@ abstraction { }
  int y = 0;
}`;
        const top = (kw: string) => new RegExp(`'${kw}' is not allowed at the top level; it belongs among statements`);
        const cls = (kw: string) => new RegExp(`'${kw}' is not allowed in a class body; it belongs among statements`);
        const stmt = (kw: string) => new RegExp(`'${kw}' is not allowed among statements; it belongs at the top level or in a class body`);
        await expectDiagnostics(src, [
            err(src, 'assert true', 'type', top('assert')),
            err(src, 'assume true', 'type', top('assume')),
            err(src, 'set gg = 1', 'type', top('set')),
            err(src, 'witness step 1', 'type', top('witness')),
            err(src, 'assert false', 'type', cls('assert')),
            err(src, 'assume false', 'type', cls('assume')),
            err(src, 'set gg = 2', 'type', cls('set')),
            err(src, 'witness step 2', 'type', cls('witness')),
            err(src, 'invariant true', 'type', stmt('invariant')),
            err(src, 'environment true', 'type', stmt('environment')),
            err(src, 'ghost int g', 'type', stmt('ghost'), { in: '  //@ ghost int g;' }),
            err(src, 'writable_if true', 'type', stmt('writable_if')),
            err(src, 'requires true', 'type', stmt('requires')),
            err(src, 'ensures true', 'type', stmt('ensures')),
            err(src, 'abstraction { }', 'type', stmt('abstraction')),
        ]);
    });

    it('writable_if protects a ghost field declared by the next annotation', async () => {
        await expectClean(`
//@ writable_if tid == 1;
//@ ghost int g;
class C {
  //@ writable_if this.holder == tid;
  //@ ghost int h;
}
thread T { }`);
    });
});

// ======================================================================= abstractions

describe('abstraction blocks', () => {
    it('requires before steps, ensures after steps, at most one stutter, one abstraction per method', async () => {
        const src = `
int x = 0;
/*@ abstraction {
  step [x] x' == 1;
  requires x == 0;
  ensures true;
  step [x] x' == 2;
  stutter [x] x' == x;
  stutter [] true;
} */
void m() { }
//@ abstraction { step [x] true; }
//@ abstraction { step [x] x' == x; }
void n() { }`;
        await expectDiagnostics(src, [
            err(src, 'requires x == 0', 'type', /'requires' must come before the steps and the 'ensures' of an abstraction/),
            err(src, "step [x] x' == 2", 'type', /'step' must come before 'ensures' in an abstraction/),
            err(src, 'stutter [] true', 'type', /An abstraction has at most one 'stutter' action; combine them with '\|\|'/),
            err(src, "abstraction { step [x] x' == x; }", 'type', /'n' already has an abstraction; merge the two blocks/),
        ]);
    });

    it('frames name shared locations: not parameters, locals or final fields; *.f names instance fields', async () => {
        const src = `
int x = 0;
final int k = 1;
class C {
  int f;
  static int s;
  final int fin = 0;
  /*@ abstraction {
    step [p] true;
    step [x[0]] true;
    step [l] true;
    step [k] true;
    step [fin] true;
    step [this.fin] true;
    step [*.fin] true;
    step [*.s] true;
  } */
  void q(C p, int[] arr) { int l = 0; }
  /*@ abstraction { step [x, f, this.f, p.f, *.f, C.s, s] true; stutter [] true; } */
  void ok(C p) { }
}`;
        const shared = /A frame entry names a shared location: a global, a field of this \('f' or 'this\.f'\), a field of a parameter \('p\.f'\), a static field \('C\.f'\), '\*\.f', or array elements \('a\[i\]', 'a\[\*\]'\)/;
        const final = (n: string) => new RegExp(`'${n}' is final and never changes; remove it from the frame`);
        await expectDiagnostics(src, [
            err(src, 'p', 'type', shared, { in: '[p]' }),
            err(src, 'x', 'type', /Only arrays can be indexed, but this expression is int/, { in: 'x[0]' }),
            err(src, 'l', 'name', /Unknown name 'l'/, { in: 'step [l]' }),
            err(src, 'k', 'type', final('k'), { in: 'step [k]' }),
            err(src, 'fin', 'type', final('fin'), { in: 'step [fin]' }),
            err(src, 'this.fin', 'type', final('fin')),
            err(src, '*.fin', 'type', final('fin')),
            err(src, 's', 'name', /Unknown name 's'/, { in: '[*.s]' }),
        ]);
    });

    it('frames over array elements: a[e] and a[*] of arrays of globals, static fields, fields of this or of a parameter, and parameters', async () => {
        const ok = `
class Buf {
  //@ writable_if this.holder == tid;
  int[] data = new int[4];
  final int[] fixed = new int[2];
  static int[] S = new int[1];
  /*@ abstraction { step [data[0]] data[0]' == v; } */
  synchronized void put0(int v) { data[0] = v; }
  /*@ abstraction { step [data[*]] true; } */
  synchronized void clear() { for (int i = 0; i < data.length; i++) { data[i] = 0; } }
  /*@ abstraction { step [this.data[i]] true; } */
  synchronized void set(int i, int v) { data[i] = v; }
  /*@ abstraction { step [fixed[*], this.fixed[0], S[i], Buf.S[*]] true; } */
  void statics(int i) { }
}
int[] G = new int[2];
/*@ abstraction { step [G[k], G[k+1]] true; } */
void two(int k) { G[k] = 1; G[k+1] = 2; }
/*@ abstraction { step [a[*]] true; } */
void fill(int[] a) { a[0] = 1; }
/*@ abstraction { step [b.data[*]] true; } */
void zap(Buf b) { b.data[0] = 0; }
/*@ abstraction { step [a[b.data.length - 1], b.data[a[0]], G[G.length - 1]] true; } */
void reads(int[] a, Buf b) { }`;
        await expectClean(ok);
    });

    it("an element entry's index: an int, evaluated before the step (no primes), side-effect free", async () => {
        const src = cv`
int n = 0;
boolean flag = false;
int[] G = new int[2];
class C { int g() { return 0; } }
/*@ abstraction {
  step [G[flag]] true;
  step [G[n']] true;
  step [G'[n]] true;
  step [G[0]'] true;
  step [G[c.g()]] true;
  step [G[nondet()]] true;
  step [G[new C().g()]] true;
  step [G[cas(n, 0, 1) ? 1 : 0]] true;
} */
void m(C c) { }`;
        const primed = /A frame entry's array and index are evaluated before the step: they cannot be primed/;
        const call = /Annotations must be side-effect free: calls are not allowed here/;
        await expectDiagnostics(src, [
            err(src, 'flag', 'type', /An array index must be int, but this expression is boolean/, { in: 'G[flag]' }),
            err(src, "G[n']", 'type', primed),
            err(src, "G'[n]", 'type', primed),
            err(src, "G[0]'", 'type', primed),
            err(src, 'c.g()', 'type', call),
            err(src, 'nondet()', 'type', /'nondet\(\)' is not allowed in annotations/),
            err(src, 'nondet()', 'type', /An array index must be int, but this expression is boolean/),
            err(src, 'new C().g()', 'type', call),
            err(src, 'new C()', 'type', /Annotations must be side-effect free: 'new' is not allowed here/),
            err(src, 'cas(n, 0, 1)', 'type', /Annotations must be side-effect free: 'cas' is not allowed here/),
        ]);
    });

    it("an element entry's array: an array that a global, a field of this, of a parameter or static, or a parameter references", async () => {
        const src = `
int n = 0;
int[] G = new int[2];
class C {
  int x = 0;
  int[] data = new int[2];
  C next;
  int[] get() { return data; }
  /*@ abstraction {
    step [x[*]] true;
    step [p[*]] true;
    step [n[0]] true;
    step [G[n][*]] true;
    step [get()[0]] true;
    step [next.data[0]] true;
    step [c.next.data[*]] true;
    step [loc[0]] true;
  } */
  void m(int p, C c) { int[] loc = data; }
}`;
        const notArray = /Only arrays can be indexed, but this expression is int/;
        const notReference = (kind: string, array: string) => new RegExp(`In a frame, '${kind.replace(/[[\]*]/g, '\\$&')}' names elements of an array that a global, a field \\(of this, of a parameter, or static\\) or a parameter references; '${array}' is not one`);
        await expectDiagnostics(src, [
            err(src, 'x', 'type', notArray, { in: 'x[*]' }),
            err(src, 'p', 'type', notArray, { in: 'p[*]' }),
            err(src, 'n', 'type', notArray, { in: 'n[0]' }),
            err(src, 'G[n]', 'type', notArray, { in: 'G[n][*]' }),
            err(src, 'G[n][*]', 'type', notReference('a[*]', 'G\\[n\\]')),
            err(src, 'get()', 'type', /Annotations must be side-effect free: calls are not allowed here/, { in: 'get()[0]' }),
            err(src, 'get()[0]', 'type', notReference('a[e]', 'get\\(\\)')),
            err(src, 'next.data[0]', 'type', notReference('a[e]', 'next\\.data'), { in: '[next.data[0]]' }),
            err(src, 'c.next.data[*]', 'type', notReference('a[*]', 'c\\.next\\.data')),
            // the abstraction stands before the method: its locals are not in scope
            err(src, 'loc', 'name', /Unknown name 'loc'/, { in: 'loc[0]' }),
        ]);
    });

    it("'[*]' is a whole frame entry; final fields and primed locations are not frame entries, a final array's elements are", async () => {
        const src = `
int x = 0;
int[] G = new int[2];
final int K = 3;
class C {
  final int[] fixed = new int[2];
  /*@ abstraction { step [fixed[*], fixed[K], this.fixed[0]] true; } */
  void ok() { }
  /*@ abstraction {
    step [fixed] true;
    step [this.fixed] true;
    step [K] true;
    step [x'] true;
    step [G[G[*]]] true;
  } */
  void bad() { }
}
thread T { int y = G[*]; }`;
        const star = /'\[\*\]' \(all the elements of an array\) is only allowed in the frame of an abstraction step, as a whole entry such as 'step \[a\[\*\]\] \.\.\.'/;
        const finalArray = /'fixed' is final and never changes; remove it from the frame \(its array's elements are framed with 'fixed\[\*\]'\)/;
        await expectDiagnostics(src, [
            err(src, 'fixed', 'type', finalArray, { in: 'step [fixed]' }),
            err(src, 'this.fixed', 'type', finalArray, { in: 'step [this.fixed]' }),
            err(src, 'K', 'type', /^'K' is final and never changes; remove it from the frame\.$/, { in: 'step [K]' }),
            err(src, "x'", 'type', /A frame entry names a location, not its value after the step: remove the prime/),
            err(src, 'G[*]', 'type', star, { in: 'G[G[*]]' }),
            err(src, 'G[*]', 'type', star, { in: 'int y = G[*]' }),
        ]);
        // '*' is the whole index or no index at all
        const partial = `
int[] G = new int[2];
/*@ abstraction { step [G[*+1]] true; } */
void m() { }`;
        await expectDiagnostics(partial, [err(partial, '+', 'syntax', /expected '\]' but found '\+'/)]);
    });

    it('witness step N must mark a statement that takes an atomic step (one that accesses shared state)', async () => {
        const src = `
volatile int m = 0;
//@ abstraction { step [m] m' == m || (m == 0 && m' == tid); }
boolean tryIt(int k) {
  int local = k;
  if (local > 0) {
    //@ witness step 1;
    return false;
  }
  //@ witness step 1;
  int seen = m;
  return cas(m, 0, tid);
}
thread T { boolean b = tryIt(1); }`;
        await expectDiagnostics(src, [
            err(src, 'witness step 1', 'type', /'witness step 1' marks a statement that accesses no shared state: it takes no atomic step/, { in: 'witness step 1;\n    return false;' }),
        ]);
    });

    it('witness step N must name a step of the enclosing method\'s abstraction', async () => {
        const src = `
int x = 0;
//@ abstraction { step [x] x' == 1; step [x] x' == 2; }
void m() {
  //@ witness step 1;
  x = 1;
  //@ witness step 3;
  x = 2;
  //@ witness step 0;
  x = 2;
}
void n() {
  //@ witness step 1;
  x = 1;
}
thread T {
  //@ witness step 2;
  x = 1;
}`;
        const none = /'witness step' only makes sense in a method with an abstraction/;
        await expectDiagnostics(src, [
            err(src, '3', 'type', /The abstraction of 'm' has 2 steps; 'witness step 3' names none of them/, { in: 'witness step 3' }),
            err(src, '0', 'type', /The abstraction of 'm' has 2 steps; 'witness step 0' names none of them/, { in: 'witness step 0' }),
            err(src, 'witness step 1', 'type', none, { in: 'void n() {\n  //@ witness step 1;' }),
            err(src, 'witness step 2', 'type', none),
        ]);
    });
});

// ======================================================================= assignment targets, cas

describe('what can be assigned', () => {
    it('final fields, holder, tid, an array length and final parameters cannot be assigned', async () => {
        const src = `
final int k = 1;
int[] arr = new int[3];
class C { final int fin = 0; static final int SF = 2; int f; }
void p(final int q, int r) {
  C c = new C();
  k = 2;
  c.fin = 3;
  C.SF = 1;
  k++;
  c.fin += 1;
  c.holder = 1;
  tid = 3;
  arr.length = 4;
  arr.length--;
  q = 1;
  r = 1; c.f = 1; arr[0] = 1;
}`;
        const final = (n: string) => new RegExp(`'${n}' is final: it can only be assigned by its initializer`);
        const length = /An array's length is fixed when it is created and cannot be assigned/;
        await expectDiagnostics(src, [
            err(src, 'k', 'type', final('k'), { in: 'k = 2' }),
            err(src, 'c.fin', 'type', final('fin'), { in: 'c.fin = 3' }),
            err(src, 'C.SF', 'type', final('SF')),
            err(src, 'k', 'type', final('k'), { in: 'k++' }),
            err(src, 'c.fin', 'type', final('fin'), { in: 'c.fin += 1' }),
            err(src, 'c.holder', 'type', /'holder' is changed only by entering and leaving synchronized code; it cannot be assigned/),
            err(src, 'tid', 'type', /'tid' is the running thread's id and cannot be assigned/),
            err(src, 'arr.length', 'type', length, { in: 'arr.length = 4' }),
            err(src, 'arr.length', 'type', length, { in: 'arr.length--' }),
            err(src, 'q', 'type', /Parameter 'q' is final and cannot be assigned/, { in: 'q = 1' }),
        ]);
    });

    it('the first argument of cas is an assignable shared location', async () => {
        const src = `
int x = 0;
final int k = 1;
int[] arr = new int[2];
class C { int f; final int fin = 0; static int s; }
int one() { return 1; }
void p(int pp) { boolean b = cas(pp, 0, 1); }
thread T {
  int l = 0;
  C c = new C();
  boolean b1 = cas(l, 0, 1);
  boolean b2 = cas(k, 0, 1);
  boolean b3 = cas(c.fin, 0, 1);
  boolean b4 = cas(one(), 0, 1);
  boolean b5 = cas(arr.length, 2, 3);
  boolean b6 = cas(3, 0, 1);
  boolean b7 = cas(x, true, 1);
  boolean b8 = cas(x, 0, false);
  boolean ok = cas(x, 0, 1) && cas(c.f, 0, 1) && cas(arr[0], 0, 1) && cas(C.s, 0, 1);
}`;
        const local = (n: string) => new RegExp(`first argument of cas must be a shared location; '${n}' is local to the thread, so an ordinary assignment does the same`);
        const notWritable = (n: string) => new RegExp(`first argument of cas must be a location the program may write; '${n}' cannot be assigned`);
        const notLocation = /first argument of cas must be a shared location: a field, a global or an array element/;
        await expectDiagnostics(src, [
            err(src, 'pp', 'type', local('pp'), { in: 'cas(pp' }),
            err(src, 'l', 'type', local('l'), { in: 'cas(l' }),
            err(src, 'k', 'type', notWritable('k'), { in: 'cas(k' }),
            err(src, 'c.fin', 'type', notWritable('fin'), { in: 'cas(c.fin' }),
            err(src, 'one()', 'type', notLocation, { in: 'cas(one()' }),
            err(src, 'arr.length', 'type', notWritable('length')),
            err(src, '3', 'type', notLocation, { in: 'cas(3' }),
            err(src, 'true', 'type', /expected value of cas must be int, but this expression is boolean/),
            err(src, 'false', 'type', /new value of cas must be int, but this expression is boolean/),
        ]);
    });
});

// ======================================================================= recursion

describe('recursion through methods without abstraction', () => {
    it('direct and mutual recursion are errors that name the cycle; an abstraction breaks the cycle', async () => {
        const src = `
void a() { a(); }
void b() { c(); }
void c() { b(); }
class K {
  void m() { n(); }
  void n() { this.m(); }
  //@ abstraction { step [] true; }
  void r() { s(); }
  void s() { r(); }
  //@ requires true;
  void u() { v(); }
  void v() { u(); }
}`;
        const msg = (cycle: string) => new RegExp(`Recursion through methods without abstraction cannot be inlined: ${cycle}\\. Give one of them an abstraction`);
        await expectDiagnostics(src, [
            err(src, 'a()', 'type', msg('a → a'), { in: 'void a() { a(); }', nth: 2 }),
            err(src, 'c()', 'type', msg('b → c → b'), { in: 'void b() { c(); }' }),
            err(src, 'b()', 'type', msg('c → b → c'), { in: 'void c() { b(); }' }),
            err(src, 'n()', 'type', msg('K\\.m → K\\.n → K\\.m'), { in: 'void m() { n(); }' }),
            err(src, 'this.m()', 'type', msg('K\\.n → K\\.m → K\\.n')),
        ]);
    });
});

// ======================================================================= duplicates

describe('duplicate declarations', () => {
    it('two globals, two classes, two threads, a class and a procedure, a ghost global and a global', async () => {
        const src = `
int g = 0;
int g = 1;
class C { }
class C { int f; }
void C() { }
thread T { }
thread T { int t; }
//@ ghost int g;`;
        const dup = (n: string, first: string) => new RegExp(`'${n}' is already declared at line ${lineOf(src, first)}; rename one of them`);
        await expectDiagnostics(src, [
            err(src, 'g', 'name', dup('g', 'int g = 0;'), { in: 'int g = 1;' }),
            err(src, 'C', 'name', dup('C', 'class C { }'), { in: 'class C { int f; }' }),
            err(src, 'C', 'name', dup('C', 'class C { }'), { in: 'void C()' }),
            err(src, 'T', 'name', dup('T', 'thread T { }'), { in: 'thread T { int t; }' }),
            err(src, 'g', 'name', dup('g', 'int g = 0;'), { in: 'int g;' }),
        ]);
    });

    it('in a class: two fields, two methods, a field and a method with one name, a field named holder', async () => {
        const src = `
class D {
  int f;
  int f;
  void m() { }
  void m() { }
  int n;
  void n() { }
  int holder;
}`;
        const dup = (n: string, firstLine: number) => new RegExp(`'${n}' is already declared in class D at line ${firstLine}; rename one of them`);
        await expectDiagnostics(src, [
            { ...at(src, 'f', { in: '  int f;\n  int f;', nth: 2 }), code: 'name', message: dup('f', at(src, 'int f;', { nth: 1 }).line) },
            { ...at(src, 'm', { in: '  void m() { }\n  void m() { }', nth: 2 }), code: 'name', message: dup('m', at(src, 'void m() { }', { nth: 1 }).line) },
            err(src, 'n', 'name', dup('n', lineOf(src, 'int n;')), { in: 'void n()' }),
            err(src, 'holder', 'name', /'holder' is the implicit monitor field of every object; choose another name/),
        ]);
    });

    it('a method and a later field with the same name: the later declaration is the duplicate', async () => {
        const src = `
class E {
  void n() { }
  int n;
}`;
        await expectDiagnostics(src, [
            err(src, 'n', 'name', new RegExp(`'n' is already declared in class E at line ${lineOf(src, 'void n()')}; rename one of them`), { in: ' n;' }),
        ]);
    });

    it('duplicate parameters; a local redeclaring a local or parameter in scope', async () => {
        const src = `
class D {
  void p(int a, int a) { }
  void q(int b) {
    int b = 1;
    int c = 0;
    { int c = 1; }
    for (int i = 0; i < 3; i++) { int i = 2; }
    while (true) { int d = 0; { int d = 1; } }
  }
}`;
        const scope = (n: string, first: string, opts = {}) => new RegExp(`'${n}' is already declared in this scope \\(line ${at(src, first, opts).line}\\); choose another name`);
        await expectDiagnostics(src, [
            err(src, 'a', 'name', /Parameter 'a' is declared twice/, { in: 'int a)' }),
            err(src, 'b', 'name', scope('b', 'int b)'), { in: 'int b = 1;' }),
            err(src, 'c', 'name', scope('c', 'int c = 0;'), { in: '{ int c = 1; }' }),
            err(src, 'i', 'name', scope('i', 'int i = 0'), { in: 'i = 2' }),
            err(src, 'd', 'name', scope('d', 'int d = 0;'), { in: 'int d = 1;' }),
        ]);
    });

    it('the same name in sibling blocks, in sequential for loops, in other methods, or shadowing a field is fine', async () => {
        await expectClean(`
class D {
  int f;
  void q(int a) {
    { int c = 1; }
    { int c = 2; }
    for (int i = 0; i < 3; i++) { }
    for (int i = 0; i < 3; i++) { }
    int f = a;
    if (a > 0) { int t = 1; } else { int t = 2; }
  }
  void r(int a) { int c = a; }
}
thread T { int c = 0; }
thread U { int c = 1; }`);
    });
});

// ======================================================================= control flow

describe('control flow', () => {
    it('a non-void method must not fall off its end', async () => {
        const src = `
int a(int x) { if (x > 0) { return 1; } }
int d() { while (true) { break; } }
int e(int x) {
  x = x + 1;
}
boolean s(boolean q) { while (q) { return true; } }`;
        const msg = (m: string) => new RegExp(`'${m}' must return a value on every path: add a 'return' at the end of its body`);
        await expectDiagnostics(src, [
            err(src, '}', 'type', msg('a'), { in: '{ return 1; } }', nth: 2 }),
            err(src, '}', 'type', msg('d'), { in: '{ break; } }', nth: 2 }),
            err(src, '}', 'type', msg('e'), { in: 'x + 1;\n}' }),
            err(src, '}', 'type', msg('s'), { in: '{ return true; } }', nth: 2 }),
        ]);
    });

    it('if/else both returning, while (true) or for (;;) without break, synchronized returning: no missing return', async () => {
        await expectClean(`
class C {
  int b(int x) { if (x > 0) { return 1; } else { return 2; } }
  boolean h(boolean q) { if (q) return true; else return false; }
  int c() { while (true) { } }
  int f() { for (;;) { } }
  int g() { while (true) { while (true) { break; } } }
  synchronized int k() { synchronized (this) { return 1; } }
  int n(int x) { if (x > 0) { return 1; } return 0; }
  void v() { }
}`);
    });

    it('break and continue only inside loops', async () => {
        const src = `
thread T {
  break;
  continue;
  if (true) { break; }
  while (true) { if (nondet()) break; else continue; }
  for (;;) { { continue; } }
}
void p() { break; }`;
        const msg = (kw: string) => new RegExp(`'${kw}' is only allowed inside a 'while' or 'for' loop`);
        await expectDiagnostics(src, [
            err(src, 'break;', 'type', msg('break'), { in: 'T {\n  break;' }),
            err(src, 'continue;', 'type', msg('continue'), { in: '  continue;\n  if' }),
            err(src, 'break;', 'type', msg('break'), { in: 'if (true) { break; }' }),
            err(src, 'break;', 'type', msg('break'), { in: 'void p() { break; }' }),
        ]);
    });
});

// ======================================================================= syntax

describe('syntax errors', () => {
    it("a missing ';' between two clauses inside one annotation", async () => {
        const src = `
int x = 0;
/*@ requires x == 0 ensures x == 1; */
void p() { }
//@ requires x >= 0 ensures x >= 1;
void q() { }
/*@ requires x == 0; ensures x == 1 */
void r() { }
//@ invariant x >= 0
thread T { }`;
        const msg = /Missing ';' after this clause/;
        await expectDiagnostics(src, [
            err(src, 'requires x == 0', 'syntax', msg, { in: '/*@ requires x == 0 ensures' }),
            err(src, 'requires x >= 0', 'syntax', msg),
        ]);
    });

    it('a Java constructor: the syntax error says that Calvin has none, and what to write instead; nothing more', async () => {
        const src = `
class Account {
  int balance;
  Account(int b) { balance = b; }
  int get() { return balance; }
}
thread T { Account a = new Account(); int x = a.get(); }`;
        await expectDiagnostics(src, [err(src, '(', 'syntax', /^Syntax error: Calvin has no constructors: give the fields of 'Account' their initial values where they are declared \('int f = 0;'\), or set them in a method called after 'new Account\(\)'\.$/, { in: 'Account(int b)' })]);
        // arguments to `new`: the same
        const args = `
class Account {
  int balance = 50;
}
final Account a = new Account(60);`;
        await expectDiagnostics(args, [err(args, '60', 'syntax', /^Syntax error: 'new Account\(\)' takes no arguments: Calvin has no constructors; give the fields of 'Account' their initial values where they are declared, or set them in a method called after 'new Account\(\)'\.$/)]);
        // a method whose result type is missing: that is what the error says
        const other = `
class Account {
  int balance;
  deposit(int b) { balance = b; }
}`;
        await expectDiagnostics(other, [
            err(other, '(', 'syntax', /^Syntax error: expected a name but found '\('; a method needs its result type before its name: 'void deposit\(\.\.\.\)' or 'int deposit\(\.\.\.\)'\.$/, { in: 'deposit(int b)' }),
            err(other, 'deposit', 'name', /^Unknown name 'deposit'/),
        ]);
    });

    it('a field declared inside an annotation comment without ghost: one error at its type, saying to write ghost or move it out', async () => {
        const src = `
class Counter {
  //@ int seen = 0;
  int n = 0;
}
//@ static boolean[] marks;
thread T { int y = 1; }`;
        await expectDiagnostics(src, [
            err(src, 'int', 'syntax', /^Syntax error: a field declared inside an annotation comment must be a ghost field: write 'ghost int seen' \(specification only\), or declare it outside the comment\.$/, { in: 'int seen' }),
            err(src, 'boolean', 'syntax', /^Syntax error: a field declared inside an annotation comment must be a ghost field: write 'ghost boolean\[\] marks' \(specification only\), or declare it outside the comment\.$/),
        ]);
        // with ghost: nothing
        await expectDiagnostics(src.replace('//@ int', '//@ ghost int').replace('//@ static boolean[]', '//@ ghost boolean'), []);
    });

    it('an annotation that starts with a misspelled clause keyword is one error at the word', async () => {
        const a = `
class Counter {
  int n = 0;
  //@ invarient n >= 0;
}
/*@ envirnoment n' >= n; */
int m = 0;`;
        await expectDiagnostics(a, [
            err(a, 'invarient', 'syntax', /^'invarient' is not an annotation clause: a clause starts with writable_if, ghost, invariant, environment, requires, ensures, abstraction, loop_invariant, assert, assume, set or witness\.$/),
            err(a, 'envirnoment', 'syntax', /^'envirnoment' is not an annotation clause/),
        ]);
    });

    it("'=' where a condition was expected suggests '=='", async () => {
        const a = `
volatile int x = 0;
//@ invariant x = 0;
thread T { x = 0; }`;
        await expectDiagnostics(a, [err(a, '=', 'syntax', /^Syntax error: unexpected '=' here; to compare two values, write '=='\.$/, { in: 'x = 0;\nthread' })]);
    });

    it('a block comment that is never closed is one error at its start; the rest of the file is the comment', async () => {
        const a = `
int x = 0;
/* TODO: a second thread
thread U {
  x = 2;
}`;
        await expectDiagnostics(a, [err(a, '/*', 'syntax', /^This comment is never closed: everything after '\/\*' is part of it\. Add '\*\/' where the comment ends\.$/)]);
    });

    it("a missing ';' after a statement, an unexpected character, an unterminated annotation", async () => {
        const a = `
int x = 0;
void p() { x = 1 }`;
        await expectDiagnostics(a, [err(a, '}', 'syntax', /Syntax error: expected ';' but found '}'/, { in: '1 }' })]);
        const b = `thread T { int x = 1 #; }`;
        await expectDiagnostics(b, [err(b, '#', 'syntax', /Unexpected character '#': it is not part of the Calvin language; remove it/)]);
        const c = `
/*@ invariant true;
thread B { }`;
        await expectDiagnostics(c, [err(c, 'thread', 'syntax', /expected '\*\/' but found 'thread'/)]);
    });

    it("a missing ';' after a field in a class is one syntax error with a readable message", async () => {
        const src = `class C { int f }
thread B { }`;
        const d = await diagnosticsOf(src);
        assert.equal(d.length, 1, JSON.stringify(d, null, 1));
        assert.equal(d[0].code, 'syntax');
        assert.match(d[0].message, /';'/);
        assert.doesNotMatch(d[0].message, /static, static/);
    });
});

// ======================================================================= names, threads, tid

describe('names, threads and tid', () => {
    it('unresolved names are name errors', async () => {
        const src = `
class C { int f; }
thread T {
  int y = zz;
  undefinedProc();
  Undef u = null;
  C c = new C();
  c.g = 1;
  int q = c.nope();
  //@ assert missing > 0;
}
/*@ abstraction { step [*.nothing] true; } */
void p() { }`;
        const unknown = (n: string) => new RegExp(`Unknown name '${n}': declare it before use or check its spelling`);
        await expectDiagnostics(src, [
            err(src, 'zz', 'name', unknown('zz')),
            err(src, 'undefinedProc', 'name', unknown('undefinedProc')),
            err(src, 'Undef', 'name', unknown('Undef')),
            err(src, 'g', 'name', unknown('g'), { in: 'c.g = 1' }),
            err(src, 'nope', 'name', unknown('nope')),
            err(src, 'missing', 'name', unknown('missing')),
            err(src, 'nothing', 'name', unknown('nothing')),
        ]);
    });

    it('thread names only in annotations; replicated threads have no id; a thread needs an instance', async () => {
        const src = `
//@ writable_if tid == P;
int y = 0;
//@ writable_if tid == W;
int z = 0;
void m() { int w = P; }
thread P { int q = P; y = 1; }
thread W[*] { int r = W; }
thread V[3] { //@ assert tid != V;
}
thread Z[0] { }`;
        const code = (n: string) => new RegExp(`Thread name '${n}' can only be used in annotations, where it stands for the thread's id`);
        const replicated = (n: string) => new RegExp(`'${n}' is a replicated thread and has no single id; compare 'tid' with the ids you need instead`);
        await expectDiagnostics(src, [
            err(src, 'W', 'type', replicated('W'), { in: 'tid == W' }),
            err(src, 'P', 'type', code('P'), { in: 'int w = P' }),
            err(src, 'P', 'type', code('P'), { in: 'int q = P' }),
            err(src, 'W', 'type', code('W'), { in: 'int r = W' }),
            err(src, 'V', 'type', replicated('V'), { in: 'tid != V' }),
            err(src, '0', 'type', /A thread needs at least one instance/, { in: 'Z[0]' }),
        ]);
    });

    it('tid has no value in the initializer of a ghost global or static ghost field either', async () => {
        const src = `
//@ ghost int g = tid;
class C {
  //@ ghost static int sg = tid;
  //@ ghost int ig = tid;
}
thread T { }`;
        const msg = /'tid' has no value in the initializer of a global or static field/;
        await expectDiagnostics(src, [
            err(src, 'tid', 'type', msg, { in: 'int g = tid' }),
            err(src, 'tid', 'type', msg, { in: 'sg = tid' }),
        ]);
    });

    it('tid has no value in the initializer of a global or static field', async () => {
        const src = `
int t0 = tid;
static int t1 = tid + 1;
class C { int own = tid; static int st = tid; }
thread T { int mine = tid; }`;
        const msg = /'tid' has no value in the initializer of a global or static field, which runs before the threads start/;
        await expectDiagnostics(src, [
            err(src, 'tid', 'type', msg, { in: 't0 = tid' }),
            err(src, 'tid', 'type', msg, { in: 't1 = tid' }),
            err(src, 'tid', 'type', msg, { in: 'st = tid' }),
        ]);
    });
});

// ======================================================================= positive programs

const EVERYTHING = cv`// A program that uses every construct of language.md.
/* an ordinary block comment */
//@ invariant count >= 0;
//@ environment tid != Main ==> count' >= count;
//@ environment data[0]' == data[0] || root.value' >= 0; invariant data != null;
public static volatile int count = 0;

//@ writable_if tid == Main || flag == 0;
int flag = 0;

//@ ghost int owner = 0;
//@ writable_if tid == Main; ghost int guarded;

int[] data = new int[4];
final Node root = new Node();

class Node {
  //@ writable_if this.holder == tid;
  int value;
  Node next;
  static int created = 0;
  private final int id = 7;
  protected boolean marked;
  //@ ghost boolean seen;
  //@ invariant this.holder == 0 ==> value >= 0;

  /*@ abstraction {
    @   requires value >= 0;
    @   stutter [value] value' == value;
    @   step [value, this.next] value' == value + 1;
    @   ensures \result == \old(value) + 1 && value == \old(value) + 1;
    @ } */
  synchronized int incr() {
    //@ witness step 1;
    value = value + 1;
    return value;
  }

  //@ requires p != null;
  //@ ensures p.value == \old(p.value);
  void touch(Node p) {
    synchronized (p) {
      int v = p.value;
    }
  }

  /*@ abstraction { step [p.value, *.marked] true; } */
  void mark(Node p) { p.value = 0; marked = true; }

  /*@ abstraction { step [Node.created] Node.created' == Node.created + 1; } @*/
  static void create() { Node.created++; }
}

/*@ requires count >= 0;
    ensures \result == count */
int read() { return count; }

void work(final int n) {
  int i = 0;
  //@ loop_invariant i >= 0;
  //@ loop_invariant i <= n || n < 0;
  while (i < n) {
    i += 1;
    if (i > 100) { break; } else { continue; }
  }
  //@ loop_invariant true;
  for (int j = 0; j < data.length; j++) {
    data[j] = j * 2 - 1 % 3 / 1;
  }
  for (i = 10; i > 0; i--) { }
  for (;;) { break; }
  i -= 2;
  i--;
  data[0]++;
  root.value++;
  boolean b = !(i < 0) && (i <= 3 || i > 4) && i >= 5 == true != false;
  boolean c2 = b ? i == 0 : -i != 1;
  boolean d = nondet();
  boolean e = cas(count, 0, 1);
  cas(flag, 0, 1);
  Node nn = null;
  int[][] grid = new int[3][];
  grid[0] = new int[2];
  int len = grid[0].length + grid.length;
  ;
  { int inner = 1; }
  { int inner = 2; }
  atomic {
    //@ assume count == 0;
    count = tid;
    //@ set owner = tid;
    if (count > 0) { count = count + 1; }
    //@ assert count > 0;
  }
  assert count > 0;
  //@ assert (\forall int k; 0 <= k && k < data.length; data[k] >= -1);
  //@ assert (\forall int k; k == k) && (\exists int k; k > 0);
  //@ assert (\exists int k; 0 < k; k == count) <==> true ==> true;
  //@ assert root.holder == 0 || root.holder == tid;
  //@ assert tid == Main || tid != Main;
  //@ set guarded = 1;
  //@ set root.seen = true;
  int rr = read() + (n - 1 < 0 ? 0 : 1);
  return;
}

thread Main {
  Node a = new Node();
  int r = a.incr();
  a.touch(root);
  a.mark(a);
  Node.create();
  work(3);
}
thread Pair[3] { int r = read(); }
thread Many[*] { synchronized (root) { root.next = null; } }
//@ invariant flag == 0 || flag == 1;`;

describe('programs without errors', () => {
    it('a program using every construct of language.md has no diagnostics', async () => {
        await expectClean(EVERYTHING);
    });

    it('a //@ annotation at the very end of a file without a newline is fine', async () => {
        assert.ok(!EVERYTHING.endsWith('\n'));
        await expectClean('int x = 0;\nthread T { x = 1; }\n//@ invariant x >= 0;');
        await expectClean('int x = 0;\nthread T { x = 1; }\n//@ invariant x >= 0');
        await expectClean('int x = 0;\nthread T { x = 1; //@ assert x >= 0;\n}');
    });

    it('@ continuation lines and a final @ before */ in block annotations are ignored', async () => {
        await expectClean(`
int m = 0;
/*@
  @ abstraction {
  @   requires m == tid;
  @   step [m] m' == 0;
  @ }
  @*/
void release() { m = 0; }
/*@ invariant m >= 0;
    @ environment m == tid ==> m' == m;
 */
thread T[*] { }`);
    });

    it('annotation keywords are ordinary identifiers outside annotations', async () => {
        await expectClean(`
int step = 0;
int requires = 1;
class ghost { int set; int witness; }
thread T {
  int invariant = step + requires;
  ghost g = new ghost();
  g.set = invariant;
  //@ assert g != null;
}`);
    });
});

// ======================================================================= error recovery

describe('error recovery', () => {
    it('a syntax error does not hide a type error elsewhere in the file', async () => {
        const a = `
int x = 0;
thread A { x = ; }
thread B { int y = true; }`;
        await expectDiagnostics(a, [
            err(a, ';', 'syntax', /Syntax error: unexpected ';'/, { in: 'x = ; }' }),
            err(a, 'true', 'type', /initial value of 'y' must be int, but this expression is boolean/),
        ]);
        const b = `
int x = 0
thread B { int y = true; }
int q() { return false; }`;
        await expectDiagnostics(b, [
            err(b, 'thread', 'syntax', /Syntax error: expected ';' but found 'thread'/),
            err(b, 'true', 'type', /initial value of 'y' must be int/),
            err(b, 'false', 'type', /value returned by 'q' must be int/),
        ]);
    });

    it('a syntax error in a statement does not hide type errors before and after it in the same block', async () => {
        const src = `
int x = 0;
thread A { int y = true; x = ; boolean z = 2; }`;
        await expectDiagnostics(src, [
            err(src, 'true', 'type', /initial value of 'y' must be int/),
            err(src, ';', 'syntax', /Syntax error: unexpected ';'/, { in: 'x = ;' }),
            err(src, '2', 'type', /initial value of 'z' must be boolean/),
        ]);
    });
});

// ======================================================================= several files

describe('several files', () => {
    it('a name declared in two files of the same program is a name error in both', async () => {
        const files = {
            'a.calvin': 'int shared = 0;\nthread A { shared = 1; helper(); }\n',
            'b.calvin': 'int shared = 1;\nvoid helper() { shared = 2; }\n',
        };
        await expectWorkspaceDiagnostics(files, {
            'a.calvin': [err(files['a.calvin'], 'shared', 'name', /'shared' is also declared in b\.calvin:1, which belongs to the same program; rename one of them/, { in: 'int shared' })],
            'b.calvin': [err(files['b.calvin'], 'shared', 'name', /'shared' is also declared in a\.calvin:1, which belongs to the same program; rename one of them/, { in: 'int shared' })],
        });
    });

    it('independent files may declare the same names', async () => {
        await expectWorkspaceDiagnostics({
            'a.calvin': 'int x = 0;\nclass Box { int v; }\nthread A { x = 1; }\n',
            'b.calvin': 'int x = 0;\nclass Box { int w; }\nthread A { x = 2; Box b = new Box(); b.w = 1; }\n',
        }, {});
    });

    it("a frame '*.f' names the file's own field first: independent files with the same class stay apart", async () => {
        const text = (t: string) => `class D {\n  volatile int n = 0;\n}\nfinal D d = new D();\n/*@ abstraction { step [*.n] (\\forall D o; true; o.n' >= o.n); } */\nvoid bump() { d.n = 1; }\nthread ${t} { bump(); }\n`;
        await expectWorkspaceDiagnostics({ 'a.calvin': text('A'), 'b.calvin': text('B') }, {});
    });

    it('a name declared in one other file resolves; declared in two other files it is ambiguous', async () => {
        await expectWorkspaceDiagnostics({
            'lib.calvin': 'class Box { int v; }\nint g = 0;\n',
            'use.calvin': 'thread T { Box b = new Box(); b.v = g; }\n',
        }, {});
        const files = {
            'a.calvin': 'int x = 0;\nclass Box { int v; }\n',
            'b.calvin': 'int x = 1;\nclass Box { int w; }\n',
            'c.calvin': 'thread T { x = 2; Box b = new Box(); }\n',
        };
        const ambiguous = (n: string) => new RegExp(`'${n}' is declared in several files \\(a\\.calvin, b\\.calvin\\); declare it in this file or keep one declaration`);
        const c = files['c.calvin'];
        const result = await frontEnd(files);
        compareDiagnostics(result['c.calvin'], [
            err(c, 'x', 'name', ambiguous('x'), { in: 'x = 2' }),
            err(c, 'Box', 'name', ambiguous('Box'), { nth: 1 }),
            err(c, 'Box', 'name', ambiguous('Box'), { nth: 2 }),
        ], c, 'c.calvin');
    });
});
