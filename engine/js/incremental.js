// Keeps the context of a full compile so that an edit of one definitions
// file can be compiled by re-running only that file (see incremental.go and
// docs/architecture.md, "Incremental compiles"). The same source runs in
// goja and in the Node.js worker.
//
// core's main() is patched (patchIncremental) to call two hooks when they
// exist: __dfdRunFile(file, run) around each definitions file it requires,
// and __dfdGraphStage(session, encode) before session.compile(). From them
// this records, per definitions file, the slice of session.actions,
// session.tests, compilation errors, jitData keys and action-assertion map
// entries its run produced, and keeps a pristine copy of every action's proto
// taken before the graph stage mutates them. A rerun puts the session back
// into the state the full compile had when that file ran, runs it, splices
// the rest back in, restores the pristine protos, and runs the graph stage
// and the encoding as main() does.
//
// A file whose run reached outside its own actions is marked unsafe, and an
// edit of it needs a full compile: it set or changed a global, changed a key
// of an includes object or another global object, called a method of another
// file's action, loaded a module (other files may share it), or was itself
// loaded by another file. What cannot be detected here (deep mutation of a
// shared object) is caught by the host's verification against a full compile.
//
// Evaluates to a function of (loadCount) returning the control object; loadCount()
// says how many modules the host's loader has run so far.
(function (loadCount) {
  "use strict";
  var g = globalThis;
  var hidden = function (name, value) {
    Object.defineProperty(g, name, { value: value, writable: true, configurable: true, enumerable: false });
  };

  var st = {
    session: null,
    compile: null, // session.compile() as main() calls it
    encode: null, // the response's encoding as main() does it
    prefix: null, // the state before the first definitions file
    order: [], // definitions files in main()'s order
    recs: new Map(), // file → record of its run
    runners: new Map(), // file → main()'s closure that requires it
    unsafe: new Map(), // file → why an edit of it needs a full compile
    current: null, // definitions file running, while one runs
    actionFile: new WeakMap(), // action → file whose run created it
    wrapped: new WeakSet(), // prototypes whose methods are watched
    assertionSets: [], // [target, assertion, file] of actionAssertionMap.set
    pristine: null, // {actions, tests, protos: Map(action → proto)}
    baseline: null, // global names before main()
    broken: "",
    // The graph stage's work per action: action → {proto, errors, threw,
    // error, deps, readsGraph, sets, bytes, key} of its last compile(), reused
    // for actions of files that did not run again while what it read of
    // the other actions is the same: no target changed (cacheKey), or each
    // lookup it made finds the same actions (deps); never when it read the
    // session's lists of actions itself (readsGraph).
    compiled: new Map(),
    // Actions whose compile() ran since their proto was last restored
    // from its pristine copy: the only ones whose protos the graph stage
    // changed (a reused result is a copy).
    dirty: new Set(),
    // The graph stage's checks over the whole graph (wrapChecks): whether
    // the last run of each found nothing, the file of each compiled proto
    // of this graph stage, the files whose compile() ran in it, and per
    // file its actions' targets and dependencies as the cycle check last
    // saw them.
    clean: { dups: false, cycles: false },
    protoFile: new Map(), // (of this graph stage)
    ranFiles: new Set(),
    seen: { dups: new Map(), cycles: new Map() },
    cacheKey: null,
    reuseDeps: false, // the entries of compiled whose deps still hold are valid
    compiling: null, // the record of the action whose compile() runs
    qualifying: null, // the record of the action whose dependencies are qualified
    stage: 0, // graph stages run
    inResolve: 0, // session.resolve() calls running
    find: null, // the index's own find(), unwrapped
    // The record in compiled of each proto the graph stage's compile()
    // returned (a copy or a fresh result), for wrapEncoder.
    recOf: new Map(),
    // What each lookup finds in this graph stage (lookupsHold), by lookupKey.
    lookups: new Map(),
    encoding: false, // a rerun's encoding runs
    caching: false, // the graph stage runs, with compiled consulted
    reuse: false, // the entries of compiled are valid in this graph stage
    rerunFile: null,
    testSet: null,
    inRerun: false
  };

  // Names of globals that existed before main(): the host's and the
  // language's. Objects among them are not scanned key by key.
  st.baseline = new Set(Object.getOwnPropertyNames(g));

  // list is an array of the session's, or none (older cores have no
  // session.tests).
  function list(a) {
    return Array.isArray(a) ? a : [];
  }

  function unsafe(file, why) {
    if (!st.unsafe.has(file)) st.unsafe.set(file, why);
  }

  // snapGlobals records the names of the globals and, for those main() or
  // user code made global (includes modules among them), their values and,
  // for objects, their own keys' values one level down. The globals that
  // existed before main() (the language's and the host's) are compared by
  // name only: on Node.js every read of a property of a context's global
  // goes through the host, and reading them all before and after each
  // definitions file was a sixth of a 3,000-file compile. A file that
  // reassigns a built-in (JSON = …) is left to the verification.
  function snapGlobals() {
    var names = Object.getOwnPropertyNames(g);
    var vals = new Map();
    for (var i = 0; i < names.length; i++) {
      var n = names[i];
      if (n === "dataform" || st.baseline.has(n)) continue; // the session grows with every file
      var d = Object.getOwnPropertyDescriptor(g, n);
      var v = d.get || d.value;
      var keys = null;
      if (Array.isArray(v)) {
        keys = [v.length];
      } else if (isObject(v)) {
        keys = [];
        var ks = Object.keys(v);
        if (ks.length <= 500) {
          for (var j = 0; j < ks.length; j++) keys.push(ks[j], v[ks[j]]);
        }
      }
      vals.set(n, { v: v, keys: keys });
    }
    return { names: names, vals: vals };
  }

  function diffGlobals(before) {
    var after = snapGlobals();
    var same = after.names.length === before.names.length;
    for (var i = 0; same && i < after.names.length; i++) same = after.names[i] === before.names[i];
    if (!same) {
      var had = new Set(before.names), has = new Set(after.names);
      var added = after.names.filter(function (n) { return !had.has(n); });
      if (added.length) return "sets the global " + added.join(", ");
      if (before.names.some(function (n) { return !has.has(n); })) return "removes a global";
      return "removes and sets a global again"; // the same names, in another order
    }
    var why = "";
    after.vals.forEach(function (a, n) {
      if (why) return;
      var b = before.vals.get(n);
      if (!b) { why = "sets the global " + n; return; }
      if (!Object.is(a.v, b.v)) { why = "changes the global " + n; return; }
      if ((a.keys === null) !== (b.keys === null)) { why = "changes the global " + n; return; }
      if (a.keys === null) return;
      if (a.keys.length !== b.keys.length) { why = "changes the global object " + n; return; }
      for (var i = 0; i < a.keys.length; i++) {
        if (!Object.is(a.keys[i], b.keys[i])) {
          why = "changes the global object " + n;
          return;
        }
      }
    });
    return why;
  }

  // watch wraps the methods of an action's prototypes so that a call made
  // while another file runs marks both files.
  function watch(action) {
    for (var p = Object.getPrototypeOf(action); p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      if (st.wrapped.has(p)) return;
      st.wrapped.add(p);
      Object.getOwnPropertyNames(p).forEach(function (name) {
        if (name === "constructor") return;
        var d = Object.getOwnPropertyDescriptor(p, name);
        if (typeof d.value !== "function" || !d.configurable) return;
        var orig = d.value;
        if (name === "compile") {
          d.value = function dfdWatched() {
            if (!st.caching) return orig.apply(this, arguments);
            return cachedCompile(this, orig, arguments);
          };
          Object.defineProperty(p, name, d);
          return;
        }
        d.value = function dfdWatched() {
          if (st.current !== null) {
            var owner = st.actionFile.get(this);
            if (owner !== undefined && owner !== st.current) {
              unsafe(owner, "its action is changed by " + st.current + " (" + name + ")");
              unsafe(st.current, "changes an action of " + owner + " (" + name + ")");
            }
          }
          return orig.apply(this, arguments);
        };
        Object.defineProperty(p, name, d);
      });
    }
  }

  // cachedCompile is action.compile() in the graph stage: the result of
  // the last one when it is valid, else computed and kept. What compile()
  // pushed to the compilation errors is replayed in the same place.
  function cachedCompile(action, orig, args) {
    var errs = st.session.graphErrors.compilationErrors;
    // A test's compile() reads the query of the dataset it tests, which
    // may be another file's: tests are always compiled.
    var c = (st.reuse || st.reuseDeps) && !st.testSet.has(action) ? st.compiled.get(action) : undefined;
    var file = st.actionFile.get(action);
    if (c !== undefined && file !== st.rerunFile && !c.readsGraph && (st.reuse || lookupsHold(c.deps))) {
      for (var i = 0; i < c.errors.length; i++) errs.push(c.errors[i]);
      var m = c.sets.length > 0 ? st.session.actionAssertionMap : null;
      for (var j = 0; j < c.sets.length; j++) m.set(c.sets[j][0], c.sets[j][1]);
      if (c.threw) throw c.error;
      var copy = c.frozen ? copyTop(c.proto) : clone(c.proto, new Map());
      if (isObject(copy)) {
        st.protoFile.set(copy, file);
        st.recOf.set(copy, c);
      }
      return copy;
    }
    var n = errs.length;
    var out;
    st.dirty.add(action);
    st.ranFiles.add(file);
    // (session.compile() has made the index of this graph stage by now.)
    watchLookups(indexOf(st.session));
    var rec = { proto: null, frozen: false, errors: null, threw: false, error: null, deps: st.find === null ? null : [], readsGraph: false, sets: [], bytes: null, key: null };
    var outer = st.compiling;
    st.compiling = rec;
    try {
      out = orig.apply(action, args);
    } catch (e) {
      rec.errors = errs.slice(n);
      rec.threw = true;
      rec.error = e;
      st.compiled.set(action, rec);
      throw e;
    } finally {
      st.compiling = outer;
      if (outer !== null) inherit(outer, rec);
    }
    rec.proto = clone(out, new Map());
    rec.frozen = freezeDeep(rec.proto);
    rec.errors = errs.slice(n);
    st.compiled.set(action, rec);
    if (isObject(out)) {
      st.protoFile.set(out, file);
      st.recOf.set(out, rec);
      wrapEncoder(out);
    }
    return out;
  }

  // inherit adds to the record of an outer compile() what an inner one
  // (run from it) read and added.
  function inherit(outer, inner) {
    outer.readsGraph = outer.readsGraph || inner.readsGraph;
    for (var i = 0; i < inner.sets.length; i++) outer.sets.push(inner.sets[i]);
    if (inner.deps === null) outer.deps = null;
    else if (outer.deps !== null) {
      for (var j = 0; j < inner.deps.length; j++) outer.deps.push(inner.deps[j]);
    }
  }

  // What an action's compile() reads of the other actions: core's
  // session.resolve() (ref(), resolve(), self() of every context) looks
  // its target up with session.indexedActions.find(). Each lookup made
  // while a compile() runs is recorded with what it found (lookupSig),
  // and a reused result is valid while every lookup finds the same. Any
  // other read of the session's lists of actions while a compile() runs
  // (user code enumerating dataform.actions, say) marks the action as
  // reading the whole graph: it is compiled again every time.
  // (core's Assertion.dependencies() adds to the action-assertion map in
  // compile(): those additions are recorded and replayed, not reads.)
  var GRAPH_FIELDS = ["actions", "tests", "indexedActions"];
  function watchGraphReads(s) {
    GRAPH_FIELDS.forEach(function (name) {
      var d = Object.getOwnPropertyDescriptor(s, name);
      if (d && (!d.configurable || d.get || d.set)) return;
      var value = d ? d.value : undefined;
      Object.defineProperty(s, name, {
        get: function () {
          if (st.compiling !== null && st.inResolve === 0) st.compiling.readsGraph = true;
          return value;
        },
        set: function (v) { value = v; },
        enumerable: d ? d.enumerable : true,
        configurable: true
      });
    });
    var p = Object.getPrototypeOf(s);
    var d = p && Object.getOwnPropertyDescriptor(p, "resolve");
    if (d && typeof d.value === "function" && d.configurable && !wrappedResolve.has(p)) {
      wrappedResolve.add(p);
      var orig = d.value;
      d.value = function dfdResolve() {
        st.inResolve++;
        try {
          return orig.apply(this, arguments);
        } finally {
          st.inResolve--;
        }
      };
      Object.defineProperty(p, "resolve", d);
    }
  }
  var wrappedResolve = new WeakSet();
  var wrappedFind = new WeakSet();
  // watchLookups wraps find() of the session's index of actions (rebuilt
  // by every graph stage; its prototype is the same).
  function watchLookups(index) {
    var p = index && Object.getPrototypeOf(index);
    if (!p || wrappedFind.has(p)) return;
    var d = Object.getOwnPropertyDescriptor(p, "find");
    if (!d || typeof d.value !== "function" || !d.configurable) return;
    wrappedFind.add(p);
    var orig = d.value;
    st.find = orig;
    d.value = function dfdFind(target) {
      var out = orig.apply(this, arguments);
      var rec = st.compiling !== null ? st.compiling : st.qualifying;
      if (rec !== null && rec.deps !== null) {
        if (arguments.length !== 1 || this !== indexOf(st.session)) rec.readsGraph = true;
        else rec.deps.push({ target: clone(target, new Map()), key: intern(lookupKey(target)), sig: lookupSig(out) });
      }
      return out;
    };
    Object.defineProperty(p, "find", d);
  }
  // indexOf reads the session's index without counting as a read of the
  // graph.
  function indexOf(s) {
    st.inResolve++;
    try {
      return s.indexedActions;
    } finally {
      st.inResolve--;
    }
  }
  // lookupSig is what resolve() uses of the actions a lookup found: their
  // kinds, targets and whether they have output.
  function lookupSig(found) {
    if (!Array.isArray(found)) return "?" + shape(found);
    if (found.length === 1) return sigPart(found[0]);
    var out = "";
    for (var i = 0; i < found.length; i++) out += sigPart(found[i]);
    return out;
  }
  // sigPart is one found action's part of lookupSig, kept while its
  // proto and target are the objects it was made from and hasOutput the
  // same, as graphKey's parts are (a rerun restores from fresh copies
  // every proto the last graph stage changed). A lookup that finds one
  // action then finds the same string each graph stage, compared with
  // the recorded one without reading it: made anew, the findings were
  // most of what a rerun that removed an action spent on its lookups at
  // 10,000 actions.
  var sigParts = new WeakMap();
  function sigPart(a) {
    var p = isObject(a) ? a.proto : undefined;
    var t = p && p.target, out = p && p.hasOutput ? 1 : 0;
    var k = isObject(a) ? sigParts.get(a) : undefined;
    if (k !== undefined && k.proto === p && k.target === t && k.out === out) return k.part;
    var part = kindOf(a) + "|" + shape(t) + "|" + out + "\n";
    if (isObject(a)) sigParts.set(a, { proto: p, target: t, out: out, part: part });
    return part;
  }
  // lookupsHold says whether every lookup of deps (a compile()'s, or
  // qualify's) finds what it found then. Many actions look the same
  // targets up: what a lookup finds is computed once per graph stage.
  function lookupsHold(deps) {
    var index = indexOf(st.session);
    if (deps === null || !index || typeof st.find !== "function") return false;
    for (var i = 0; i < deps.length; i++) {
      var d = deps[i];
      var sig = st.lookups.get(d.key);
      if (sig === undefined) {
        sig = lookupSig(st.find.call(index, d.target));
        st.lookups.set(d.key, sig);
      }
      if (sig !== d.sig) return false;
    }
    return true;
  }
  // intern returns the one string of s's content that dependencies'
  // lookup keys share: lookupsHold's map lookups of equal keys are then
  // of the same string, told equal without reading it.
  var interned = new Map();
  function intern(s) {
    var k = interned.get(s);
    if (k !== undefined) return k;
    interned.set(s, s);
    return s;
  }
  // lookupKey tells apart what find() may tell apart: the value, deep,
  // and the prototype of an object (a protobufjs Target's defaults are
  // its prototype's).
  function lookupKey(v) {
    return isObject(v) ? kindOf(v) + "@" + shape(v) : shape(v);
  }

  // wrapEncoder wraps the encoder of msg's message type (protobufjs's
  // static Type.encode, which CompiledGraph.encode looks up for every
  // action) so that a rerun encodes an action whose compile() result was
  // reused by copying the bytes of its last encoding. Those bytes were
  // written from an equal proto: the copy is of the same compile() result,
  // and the graph stage after compile() (core's fullyQualifyDependencies
  // and alterActionName) sets only its target, dependencyTargets and
  // parentAction, whose final values (their shapes, rec.key) must be
  // what they were.
  // At 3,000 actions encoding the graph was a third of a rerun. Only
  // reruns use it: a full compile's encoding is left as core does it.
  var wrappedEncoders = new WeakSet();
  function wrapEncoder(msg) {
    var proto = Object.getPrototypeOf(msg);
    var ctor = proto && proto.constructor;
    if (!ctor || wrappedEncoders.has(ctor) || typeof ctor.encode !== "function") return;
    wrappedEncoders.add(ctor);
    var orig = ctor.encode;
    ctor.encode = function dfdEncode(m, w) {
      var rec = st.encoding && isObject(m) ? st.recOf.get(m) : undefined;
      if (rec === undefined || !w || typeof w._push !== "function") return orig.apply(this, arguments);
      // (The three parts compared one by one, not joined: a frozen
      // value's shape is the same string each time, compared by identity,
      // where a joined key was a new string compared by content, a tenth
      // of a rerun's encoding at 10,000 actions.)
      var t = shape(m.target), d = shape(m.dependencyTargets), p = shape(m.parentAction);
      if (rec.bytes === null || rec.key === null || rec.key[0] !== t || rec.key[1] !== d || rec.key[2] !== p) {
        // Its own writer (created by encode, as for a top-level message):
        // the bytes are then whole, and copied into w like reused ones.
        rec.bytes = orig.call(this, m, undefined, arguments[2]).finish();
        rec.key = [t, d, p];
      }
      return w._push(writeRaw, rec.bytes.length, rec.bytes);
    };
  }
  // writeRaw is a protobufjs writer operation: val's bytes as they are.
  function writeRaw(val, buf, pos) {
    buf.set(val, pos);
  }
  // shape is a value's own enumerable keys and values, deep: what an
  // encoder reads of a target (it writes own fields only).
  var shapeOfFrozen = new WeakMap();
  function shape(v) {
    if (v === undefined) return "u";
    if (typeof v === "string") return JSON.stringify(v);
    if (!isObject(v)) return typeof v + ":" + String(v);
    var out = shapeOfFrozen.get(v);
    if (out !== undefined) return out;
    out = shapeOf(v);
    if (frozenDeep.has(v)) shapeOfFrozen.set(v, out);
    return out;
  }
  function shapeOf(v) {
    var out, i;
    if (Array.isArray(v)) {
      out = "[";
      for (i = 0; i < v.length; i++) out += shape(v[i]) + ",";
      return out + "]";
    }
    var ks = Object.keys(v);
    out = "{";
    for (i = 0; i < ks.length; i++) out += JSON.stringify(ks[i]) + ":" + shape(v[ks[i]]) + ",";
    return out + "}";
  }

  // wrapChecks wraps the session's checks over the whole graph, which only
  // add compile errors (and drop duplicates): in a rerun they are skipped
  // when their inputs are those of the last graph stage and it found
  // nothing. Duplicate targets depend on every action's target and
  // canonical target, which graphKey covers (st.reuse); cycles on those
  // and on every action's dependencies, of which only those of files whose
  // compile() ran again can have changed (the others' are copies of the
  // same results). At 3,000 actions the two were 40% of a rerun. The full
  // compile a rerun is verified against always runs them.
  var checksWrapped = new WeakSet();
  function wrapChecks(s) {
    var p = Object.getPrototypeOf(s);
    if (!p || checksWrapped.has(p)) return;
    checksWrapped.add(p);
    wrapCheck(p, "removeNonUniqueActionsFromCompiledGraph", function (orig, self, args) {
      var errs = st.session.graphErrors.compilationErrors, n = errs.length;
      var same = st.caching && sameInput(st.seen.dups, chunks(args[0]), function (q) {
        return [q.target, q.canonicalTarget];
      });
      if (skipChecks() && st.clean.dups && same) return undefined;
      if (st.caching && st.inRerun && noDuplicates(args[0])) {
        st.clean.dups = true;
        return undefined;
      }
      var before = chunkSizes(args[0]);
      var out = orig.apply(self, args);
      st.clean.dups = st.caching && errs.length === n && chunkSizes(args[0]) === before;
      return out;
    });
    wrapCheck(p, "fullyQualifyDependencies", qualify);
    wrapCheck(p, "checkCircularity", function (orig, self, args) {
      var errs = st.session.graphErrors.compilationErrors, n = errs.length;
      var same = st.caching && sameInput(st.seen.cycles, args[0], function (q) {
        return [q.target, q.dependencyTargets];
      });
      if (skipChecks() && st.clean.cycles && same) return undefined;
      if (st.caching && st.inRerun && acyclic(args[0])) {
        st.clean.cycles = true;
        return undefined;
      }
      var out = orig.apply(self, args);
      st.clean.cycles = st.caching && errs.length === n;
      return out;
    });
  }
  // qualify is core's fullyQualifyDependencies: each dependency target of
  // each action looked up (find), replaced by the found action's target,
  // and a compile error for one that finds none or several. It runs
  // core's for one action at a time (core's treats each on its own), in
  // a full compile too, so that an error's stack has the same frames in
  // the full compile a rerun is verified against.
  //
  // An action whose compile() result is a kept one's copy has that
  // result's dependencies, target and file: when every lookup finds what
  // it found the last time, its qualified dependencies and errors are
  // the last time's, kept with the result (frozen, so that their shapes
  // and keys are kept too). Within a rerun whose targets are all the last
  // graph stage's (st.reuse), a lookup finds what it found in that stage.
  // At 10,000 actions qualifying was a seventh of a rerun, and its fresh
  // targets made every action's encoding key anew. A dependency with
  // includeDependentAssertions also reads the action-assertion map: its
  // action is always qualified anew.
  function qualify(orig, self, args) {
    var todo = args[0];
    if (args.length !== 1 || !Array.isArray(todo)) return orig.apply(self, args);
    var errs = st.session.graphErrors.compilationErrors;
    for (var i = 0; i < todo.length; i++) {
      var e = todo[i];
      var c = st.caching && isObject(e) ? st.recOf.get(e) : undefined;
      var kept = c !== undefined && isObject(c.proto) && e.dependencyTargets === c.proto.dependencyTargets &&
        e.target === c.proto.target && e.fileName === c.proto.fileName;
      var q = kept ? c.qualified : undefined;
      if (q !== undefined && st.inRerun && ((st.reuse && q.stage === st.stage - 1) || lookupsHold(q.deps))) {
        for (var j = 0; j < q.errors.length; j++) errs.push(q.errors[j]);
        if (q.set) e.dependencyTargets = q.targets;
        q.stage = st.stage;
        continue;
      }
      var input = e.dependencyTargets, n = errs.length;
      var rec = kept && !readsAssertions(input) ? { deps: typeof st.find === "function" ? [] : null, readsGraph: false } : null;
      st.qualifying = rec;
      try {
        orig.call(self, [e]);
      } finally {
        st.qualifying = null;
      }
      if (rec === null || rec.deps === null || rec.readsGraph) continue;
      var set = e.dependencyTargets !== input;
      if (set && !freezeDeep(e.dependencyTargets)) continue;
      c.qualified = { deps: rec.deps, errors: errs.slice(n), set: set, targets: e.dependencyTargets, stage: st.stage };
    }
    return undefined;
  }
  function readsAssertions(deps) {
    if (!Array.isArray(deps)) return true;
    for (var i = 0; i < deps.length; i++) {
      if (!isObject(deps[i]) || deps[i].includeDependentAssertions) return true;
    }
    return false;
  }
  function wrapCheck(p, name, f) {
    var d;
    for (var q = p; q && !d; q = Object.getPrototypeOf(q)) d = Object.getOwnPropertyDescriptor(q, name);
    if (!d || typeof d.value !== "function") return;
    var orig = d.value;
    Object.defineProperty(p, name, {
      value: function dfdCheck() { return f(orig, this, arguments); },
      writable: true, configurable: true, enumerable: false
    });
  }
  // When the targets changed (an action came or went), the checks' inputs
  // differ, but a rerun need not run core's checks to know they find
  // nothing: with no duplicate target or canonical target, core's check
  // reports nothing and keeps every action; with no cycle, core's reports
  // nothing. These find that out with a third of core's work (each target
  // keyed once, targetKey), and leave anything else to core's:
  // duplicates, cycles, a target that is not an object (core's then
  // throws), a chain deep enough that core's recursive search might.
  //
  // targetKey stands for core's JSONObjectStringifier of a target: two
  // targets have the same key exactly when core's are the same. Keys are
  // compared, never shown, so a target of only string database, schema
  // and name (the usual one) gets a key of its own, made without sorting
  // or stringifying (at 10,000 actions the keys of dependencies, made
  // anew each graph stage, were a twelfth of a rerun); core's key of any
  // other target names a field or a value such a target lacks, so it
  // equals none of theirs. A frozen target is one of a kept compile()
  // result (freezeDeep): its key is kept with it.
  var keyOfFrozen = new WeakMap();
  function targetKey(t) {
    var k = keyOfFrozen.get(t);
    if (k !== undefined) return k;
    k = plainTargetKey(t);
    if (k === null) {
      var ks = Object.keys(t).sort(), r = {};
      for (var i = 0; i < ks.length; i++) r[ks[i]] = t[ks[i]];
      k = JSON.stringify(r);
    }
    if (frozenDeep.has(t)) keyOfFrozen.set(t, k);
    return k;
  }
  function plainTargetKey(t) {
    var ks = Object.keys(t), db, schema, name;
    for (var i = 0; i < ks.length; i++) {
      var v = t[ks[i]];
      if (v === undefined) continue; // (JSON leaves it out)
      if (typeof v !== "string") return null;
      if (ks[i] === "database") db = v;
      else if (ks[i] === "schema") schema = v;
      else if (ks[i] === "name") name = v;
      else return null;
    }
    var part = function (v) { return v === undefined ? "-" : v.length + ":" + v; };
    // ("\u0001" never starts core's key, which is JSON: "{…}".)
    return "\u0001" + part(db) + part(schema) + part(name);
  }
  function isObject(v) {
    return v !== null && typeof v === "object";
  }
  function noDuplicates(graph) {
    var protos = chunks(graph);
    if (protos === null) return false;
    var targets = new Set(), canonical = new Set();
    for (var i = 0; i < protos.length; i++) {
      var q = protos[i];
      if (!isObject(q) || !isObject(q.target) || !isObject(q.canonicalTarget)) return false;
      var k = targetKey(q.target), c = targetKey(q.canonicalTarget);
      if (targets.has(k) || canonical.has(c)) return false;
      targets.add(k);
      canonical.add(c);
    }
    return true;
  }
  var MAX_CHAIN = 1000;
  function acyclic(protos) {
    if (!Array.isArray(protos)) return false;
    var n = protos.length, ids = new Map(), i, j;
    for (i = 0; i < n; i++) {
      var q = protos[i];
      if (!isObject(q) || !isObject(q.target)) return false;
      var k = targetKey(q.target);
      if (ids.has(k)) return false; // one vertex for two actions: core's to judge
      ids.set(k, i);
    }
    // Kahn's algorithm over the edges core's check keeps: dependencies
    // that are actions of the graph.
    var succ = new Array(n), indeg = new Array(n).fill(0);
    for (i = 0; i < n; i++) {
      var p = protos[i];
      // (core's skips declarations too; their protos have no dependencies)
      var deps = !p.dependencyTargets ? [] : p.dependencyTargets;
      if (!Array.isArray(deps)) return false;
      var out = [];
      for (var d = 0; d < deps.length; d++) {
        if (!isObject(deps[d])) return false;
        j = ids.get(targetKey(deps[d]));
        if (j === undefined) continue;
        if (j === i) return false; // depends on itself
        out.push(j);
        indeg[j]++;
      }
      succ[i] = out;
    }
    var queue = [], depth = new Array(n).fill(0), done = 0;
    for (i = 0; i < n; i++) if (indeg[i] === 0) queue.push(i);
    while (queue.length > 0) {
      i = queue.pop();
      done++;
      for (var e = 0; e < succ[i].length; e++) {
        j = succ[i][e];
        if (depth[i] + 1 > depth[j]) depth[j] = depth[i] + 1;
        if (depth[j] > MAX_CHAIN) return false;
        if (--indeg[j] === 0) queue.push(j);
      }
    }
    return done === n;
  }

  function skipChecks() {
    return st.caching && st.inRerun && st.reuse;
  }
  // The compiled graph's lists of actions the duplicate check reads (and
  // filters), tests apart.
  var ACTION_CHUNKS = ["tables", "operations", "declarations", "assertions", "notebooks", "dataPreparations"];
  function chunks(graph) {
    if (!graph) return null;
    var out = [];
    ACTION_CHUNKS.forEach(function (k) {
      if (Array.isArray(graph[k])) out = out.concat(graph[k]);
    });
    return out;
  }
  function chunkSizes(graph) {
    if (!graph) return "";
    var out = "";
    ACTION_CHUNKS.concat("tests").forEach(function (k) {
      out += (Array.isArray(graph[k]) ? graph[k].length : -1) + ",";
    });
    return out;
  }
  // sameInput records in seen, for each file whose compile() ran in this
  // graph stage (every file, in a full compile), what a check reads of its
  // actions' compiled protos (part), and says whether that is what the
  // check saw last time. An action whose compile() threw is not in a
  // check's input: its file's part is then shorter, and differs.
  function sameInput(seen, protos, part) {
    if (!Array.isArray(protos)) return false;
    var keys = new Map();
    for (var i = 0; i < protos.length; i++) {
      var q = protos[i];
      var file = isObject(q) ? st.protoFile.get(q) : undefined;
      if (file === undefined) return false;
      // (In a full compile every file's compile() ran.)
      if (!st.ranFiles.has(file)) continue;
      keys.set(file, (keys.get(file) || "") + JSON.stringify(part(q)) + "\n");
    }
    var same = st.inRerun;
    st.ranFiles.forEach(function (file) {
      var k = keys.get(file) || "";
      if (seen.get(file) !== k) same = false;
      seen.set(file, k);
    });
    return same;
  }

  // kindOf names a value's prototype (an action's class): core's bundle
  // is minified, and several of its classes have the same name, so
  // prototypes are numbered as met.
  var kinds = new Map(), kindsMet = 0;
  function kindOf(a) {
    var c = isObject(a) ? Object.getPrototypeOf(a) : undefined;
    var k = kinds.get(c);
    if (k === undefined) {
      k = "k" + kindsMet++;
      kinds.set(c, k);
    }
    return k;
  }

  // graphKey says what an action's compile() reads of the others: their
  // kinds and targets (ref resolution), operations' hasOutput.
  // An action's part is kept while its proto, target and canonical
  // target are the objects it was made from and hasOutput the same: a
  // rerun restores the protos the last graph stage changed from fresh
  // copies, and its own file makes new actions. (What that keeps from
  // being seen, a file writing into another file's action's target in
  // place, would make a reused compile() result wrong anyway: the
  // verification's to catch.) At 3,000 actions the key was a tenth of a
  // rerun. The key is the list of parts, compared part by part (kept
  // parts are the same strings): joined, it was 10 ms of a rerun at
  // 10,000 actions.
  var keyParts = new WeakMap();
  function graphKey(s) {
    var parts = [];
    var add = function (a) {
      var p = a.proto || {};
      var k = keyParts.get(a);
      if (k === undefined || k.proto !== p || k.target !== p.target || k.canonical !== p.canonicalTarget || k.hasOutput !== p.hasOutput) {
        k = {
          proto: p, target: p.target, canonical: p.canonicalTarget, hasOutput: p.hasOutput,
          part: kindOf(a) + "|" + JSON.stringify(p.target) + "|" + JSON.stringify(p.canonicalTarget) + "|" + (p.hasOutput ? 1 : 0)
        };
        keyParts.set(a, k);
      }
      parts.push(k.part);
    };
    s.actions.forEach(add);
    list(s.tests).forEach(add);
    return parts;
  }
  function samePartsOf(a, b) {
    if (a === null || b === null || a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) return false;
    }
    return true;
  }

  function jitFields(s) {
    return s.jitContextData && s.jitContextData.fields;
  }

  function start(s) {
    st.session = s;
    wrapChecks(s);
    watchGraphReads(s);
    if (s.tests !== undefined && !Array.isArray(s.tests)) {
      // Cores before 3.0.57 keep tests by name; recompiles do not know that
      // shape, so such a core compiles in full.
      st.broken = "this core keeps session.tests in a form recompiles do not know";
    }
    var m = s.actionAssertionMap;
    if (m && typeof m.set === "function") installAssertionMap(s, m);
    var f = jitFields(s);
    st.prefix = {
      actions: s.actions.slice(),
      tests: list(s.tests).slice(),
      errors: s.graphErrors.compilationErrors.slice(),
      jitKeys: f ? Object.keys(f) : [],
      assertionSets: st.assertionSets.length
    };
    for (var i = 0; i < st.prefix.actions.length; i++) watch(st.prefix.actions[i]);
  }

  // installAssertionMap records the entries of the session's
  // action-assertion map (core fills it from Assertion.dependencies()), so
  // that a rerun can rebuild it without the old entries of the file.
  function installAssertionMap(s, m) {
    var set = Object.getPrototypeOf(m).set;
    Object.defineProperty(m, "set", {
      value: function (t, v) {
        st.assertionSets.push([t, v, st.current]);
        // An assertion's compile() adds its refs here (core's
        // Assertion.dependencies()): a reused result adds them again.
        if (st.compiling !== null) st.compiling.sets.push([t, v]);
        return set.call(this, t, v);
      },
      writable: true, configurable: true, enumerable: false
    });
  }

  function dfdRunFile(closure) {
    closure();
  }

  // run runs one definitions file's closure and records what it produced.
  function run(file, closure) {
    var s = st.session;
    var errs = s.graphErrors.compilationErrors;
    var a0 = s.actions.length, t0 = list(s.tests).length, e0 = errs.length;
    var f = jitFields(s);
    var k0 = f ? Object.keys(f).length : 0;
    var as0 = st.assertionSets.length;
    var l0 = loadCount();
    var before = snapGlobals();
    st.current = file;
    var limit = raiseStackLimit();
    try {
      dfdRunFile(closure);
    } finally {
      st.current = null;
      lowerStackLimit(limit);
    }
    var s2 = st.session;
    if (g.dataform !== s2 || s2.graphErrors.compilationErrors !== errs || s2.actions.length < a0 || list(s2.tests).length < t0) {
      unsafe(file, "replaces or shrinks core's session state");
    }
    trimStacks(errs, e0, "at dfdRunFile (", limit);
    var rec = {
      actions: s2.actions.slice(a0),
      tests: list(s2.tests).slice(t0),
      errors: errs.slice(e0),
      jitKeys: f ? Object.keys(f).slice(k0) : [],
      assertionSets: st.assertionSets.slice(as0)
    };
    var loads = loadCount() - l0;
    if (loads === 0) unsafe(file, "was loaded by another file before main() required it");
    else if (loads > 1) unsafe(file, "loads other modules, which later files may share");
    var why = diffGlobals(before);
    if (why) unsafe(file, why);
    rec.actions.forEach(function (a) { st.actionFile.set(a, file); watch(a); });
    rec.tests.forEach(function (a) { st.actionFile.set(a, file); watch(a); });
    return rec;
  }

  // The shape of any value: a copy that keeps prototypes (protobufjs
  // messages, Long), with objects shared within one copy shared in it too.
  // Own properties are assigned, as fast as a plain object's, except those
  // a prototype has an accessor or a read-only property for (protobufjs's
  // oneof fields): those are defined, so that no setter runs.
  function clone(v, seen) {
    if (v === null || typeof v !== "object") return v;
    var c = seen.get(v);
    if (c !== undefined) return c;
    if (ArrayBuffer.isView(v)) {
      c = v.slice();
      seen.set(v, c);
      return c;
    }
    var ks = Object.keys(v);
    var i;
    if (Array.isArray(v)) {
      c = new Array(v.length);
      seen.set(v, c);
      for (i = 0; i < ks.length; i++) c[ks[i]] = clone(v[ks[i]], seen);
      return c;
    }
    var proto = Object.getPrototypeOf(v);
    c = Object.create(proto);
    seen.set(v, c);
    var guarded = guardedNames(proto);
    for (i = 0; i < ks.length; i++) put(c, ks[i], clone(v[ks[i]], seen), guarded);
    return c;
  }
  function put(c, k, x, guarded) {
    if (guarded.has(k)) Object.defineProperty(c, k, { value: x, writable: true, enumerable: true, configurable: true });
    else c[k] = x;
  }

  // A reused compile() result is a copy of the kept one's top level, over
  // its nested values: core's graph stage after compile() only assigns
  // target, dependencyTargets and parentAction of the top level (a deep
  // copy of every reused result was a seventh of a rerun at 3,000
  // actions). The kept result's nested values are frozen, so that a core
  // that wrote into them could not change the kept result unseen: its
  // bundle is strict code, the write throws, and the rerun fails and
  // compiles in full. A result with a typed array (which cannot be
  // frozen) is copied deep, as before.
  function copyTop(v) {
    if (!isObject(v)) return v;
    if (Array.isArray(v)) return v.slice();
    var proto = Object.getPrototypeOf(v), c = Object.create(proto);
    var guarded = guardedNames(proto), ks = Object.keys(v);
    for (var i = 0; i < ks.length; i++) put(c, ks[i], v[ks[i]], guarded);
    return c;
  }
  // freezeDeep freezes v and every object in it, and says whether it
  // could (false when it holds a typed array).
  // (frozenDeep: the objects it froze with all in them, whose keys and
  // shapes can be kept.)
  var frozenDeep = new WeakSet();
  function freezeDeep(v) {
    if (!isObject(v) || Object.isFrozen(v)) return !ArrayBuffer.isView(v);
    if (ArrayBuffer.isView(v)) return false;
    Object.freeze(v);
    var ks = Object.keys(v), ok = true;
    for (var i = 0; i < ks.length; i++) ok = freezeDeep(v[ks[i]]) && ok;
    if (ok) frozenDeep.add(v);
    return ok;
  }

  // guardedNames are the names an assignment to an object with prototype
  // proto would not simply define: accessors and read-only properties of
  // its prototype chain, and __proto__.
  var guardedCache = new WeakMap();
  var guardedNull = null; // for objects without a prototype
  function guardedNames(proto) {
    var out = proto === null ? guardedNull : guardedCache.get(proto);
    if (out !== undefined && out !== null) return out;
    out = new Set(["__proto__"]);
    for (var p = proto; p !== null; p = Object.getPrototypeOf(p)) {
      var names = Object.getOwnPropertyNames(p);
      for (var i = 0; i < names.length; i++) {
        var d = Object.getOwnPropertyDescriptor(p, names[i]);
        if (d.get || d.set || d.writable === false) out.add(names[i]);
      }
    }
    if (proto === null) guardedNull = out;
    else guardedCache.set(proto, out);
    return out;
  }

  function keepPristine(actions, tests) {
    var seen = new Map();
    var protos = new Map();
    actions.forEach(function (a) { protos.set(a, clone(a.proto, seen)); });
    tests.forEach(function (a) { protos.set(a, clone(a.proto, seen)); });
    return protos;
  }

  hidden("__dfdSkipGraphVerify", false);
  hidden("__dfdRunFile", function (file, closure) {
    if (st.session === null) start(g.dataform);
    st.runners.set(file, closure);
    st.order.push(file);
    st.recs.set(file, run(file, closure));
  });
  // The stacks of errors recorded while a file runs or in the graph stage
  // end at the frame of dfdRunFile or dfdGraphStage: what called those
  // differs between a full compile (main()) and a rerun, and is not the
  // user's code.
  // (goja: "at dfdWatched (…)" after "at apply (native)"; V8: "at
  // Table.dfdWatched [as config] (…)".)
  var watchedFrames = /\n(?:[ \t]*at apply \(native\)\n)?[ \t]*at (?:[^ \n]+\.)?dfdWatched [^\n]*\n/g;
  function trimStacks(errs, from, frame, limit) {
    for (var i = from; i < errs.length; i++) {
      var e = errs[i];
      if (!e || typeof e.stack !== "string") continue;
      // Whether a prototype was watched when an error went through it
      // depends on the files run before: its frames are taken out.
      if (e.stack.indexOf("dfdWatched") >= 0) e.stack = e.stack.replace(watchedFrames, "\n");
      if (limit !== null) e.stack = firstFrames(e.stack, limit);
      var at = e.stack.indexOf(frame);
      if (at < 0) continue;
      // The stack ends with that frame's line and a newline, also when
      // the frame was the last one V8 kept (Error.stackTraceLimit).
      var end = e.stack.indexOf("\n", at);
      e.stack = end >= 0 ? e.stack.slice(0, end + 1) : e.stack + "\n";
    }
  }

  // V8 keeps Error.stackTraceLimit frames of a stack (the Node worker sets
  // the CLI's 10), and the frames of watched methods taken out above would
  // leave fewer than a run without them: while hooks run, the limit is
  // raised, and trimStacks cuts each stack back to the frames the limit
  // kept. (goja has no such limit: null.)
  var STACK_SLACK = 32;
  function raiseStackLimit() {
    var E = g.Error;
    var limit = E && E.stackTraceLimit;
    if (typeof limit !== "number" || !(limit >= 0) || limit > 1e6) return null;
    E.stackTraceLimit = limit + STACK_SLACK;
    return limit;
  }
  function lowerStackLimit(limit) {
    if (limit !== null && g.Error.stackTraceLimit === limit + STACK_SLACK) g.Error.stackTraceLimit = limit;
  }
  // firstFrames is stack with at most n frames ("    at …" lines).
  function firstFrames(stack, n) {
    var lines = stack.split("\n");
    var frames = 0;
    for (var i = 0; i < lines.length; i++) {
      if (!/^\s+at /.test(lines[i])) continue;
      if (++frames > n) return lines.slice(0, i).join("\n");
    }
    return stack;
  }

  function dfdGraphStage() {
    st.stage++;
    var errs = st.session.graphErrors.compilationErrors;
    var n = errs.length;
    var key = graphKey(st.session);
    // With includeTestsInCompiledGraph, core adds each test to the
    // dependencies of the table it tests after every compile(), through
    // the table's own proto: a copy of an earlier result would lack it.
    var pc = st.session.projectConfig;
    if (pc && pc.includeTestsInCompiledGraph) key = null;
    st.reuse = key !== null && samePartsOf(key, st.cacheKey);
    st.reuseDeps = key !== null && st.cacheKey !== null;
    if (key === null) st.compiled = new Map();
    st.cacheKey = key;
    st.testSet = new Set(list(st.session.tests));
    st.ranFiles = new Set();
    forgetGraphStage();
    st.caching = true;
    g.__dfdSkipGraphVerify = st.inRerun;
    var limit = raiseStackLimit();
    var graph;
    try {
      graph = st.compile();
    } finally {
      st.caching = false;
      st.reuse = false;
      st.reuseDeps = false;
      g.__dfdSkipGraphVerify = false;
      lowerStackLimit(limit);
    }
    trimStacks(st.session.graphErrors.compilationErrors, n, "at dfdGraphStage (", limit);
    return graph;
  }

  hidden("__dfdGraphStage", function (session, compile, encode) {
    if (st.session === null) start(session);
    st.compile = compile;
    st.encode = encode;
    var actions = session.actions.slice(), tests = list(session.tests).slice();
    st.pristine = {
      actions: actions,
      tests: tests,
      errors: session.graphErrors.compilationErrors.slice(),
      protos: keepPristine(actions, tests)
    };
    var graph = dfdGraphStage();
    forgetGraphStage();
    return graph;
  });

  // forgetGraphStage lets go of what only a graph stage and its encoding
  // use (and starts the next one's): held until the next one, the maps
  // kept a full compile's whole graph alive (a fifth more of the worker's
  // peak at 3,000 actions).
  function forgetGraphStage() {
    st.protoFile = new Map();
    st.recOf = new Map();
    st.lookups = new Map();
  }

  function concatRecs(from, to, field) {
    var out = [];
    for (var i = from; i < to; i++) {
      var r = st.recs.get(st.order[i]);
      for (var j = 0; j < r[field].length; j++) out.push(r[field][j]);
    }
    return out;
  }

  // restoreProtos gives actions a fresh copy of their pristine protos (the
  // graph stage mutates protos: targets renamed, dependencies qualified,
  // queries set).
  function restoreProtos(list) {
    var seen = new Map();
    list.forEach(function (a) {
      var p = st.pristine.protos.get(a);
      if (p !== undefined) a.proto = clone(p, seen);
    });
  }

  function rebuildAssertionMap(s, entries) {
    var old = s.actionAssertionMap;
    if (!old || typeof old.set !== "function") return;
    var m = new (old.constructor)();
    var set = Object.getPrototypeOf(m).set;
    entries.forEach(function (e) { set.call(m, e[0], e[1]); });
    s.actionAssertionMap = m;
    installAssertionMap(s, m);
  }

  function rebuildJitFields(s, keysInOrder, values) {
    var f = jitFields(s);
    if (!f) return;
    var n = Object.create(Object.getPrototypeOf(f));
    keysInOrder.forEach(function (k) { n[k] = values[k]; });
    s.jitContextData.fields = n;
  }

  // rerun compiles again with file re-run ("" re-runs no file) and returns
  // the encoded response as main() would.
  function rerun(file) {
    if (st.broken) throw new Error("incremental context unusable: " + st.broken);
    if (!st.encode) throw new Error("incremental context has no graph stage");
    var s = st.session;
    var idx = file === "" ? st.order.length : st.order.indexOf(file);
    if (idx < 0) throw new Error(file + " was not run by the full compile");
    st.broken = "an incremental compile did not finish";
    var pre = st.prefix;
    // Every action back to its pristine proto (those whose compile() ran
    // in the last graph stage: the others still have it; at 3,000 actions
    // restoring all was 20 ms of a rerun); the session as it was when the
    // file ran in the full compile.
    var dirty = [];
    st.dirty.forEach(function (a) { dirty.push(a); });
    st.dirty = new Set();
    restoreProtos(dirty);
    var f = jitFields(s);
    var values = {};
    if (f) st.order.forEach(function (x) { var r = st.recs.get(x); r.jitKeys.forEach(function (k) { values[k] = f[k]; }); });
    if (f) pre.jitKeys.forEach(function (k) { values[k] = f[k]; });
    var keysBefore = pre.jitKeys.concat(concatRecs(0, idx, "jitKeys"));
    var setsBefore = st.assertionSets.slice(0, pre.assertionSets).concat(concatRecs(0, idx, "assertionSets"));
    s.actions = pre.actions.concat(concatRecs(0, idx, "actions"));
    if (s.tests) s.tests = pre.tests.concat(concatRecs(0, idx, "tests"));
    s.graphErrors.compilationErrors = pre.errors.concat(concatRecs(0, idx, "errors"));
    st.assertionSets = setsBefore;
    rebuildAssertionMap(s, setsBefore);
    rebuildJitFields(s, keysBefore, values);
    if (file !== "") {
      var rec = run(file, st.runners.get(file));
      if (st.unsafe.has(file)) {
        st.broken = file + " " + st.unsafe.get(file);
        var e = new Error("not incremental: " + st.broken);
        e.dfdNotIncremental = true;
        throw e;
      }
      st.recs.set(file, rec);
      var nf = jitFields(s);
      if (nf) rec.jitKeys.forEach(function (k) { values[k] = nf[k]; });
      var seen = new Map();
      rec.actions.forEach(function (a) { st.pristine.protos.set(a, clone(a.proto, seen)); });
      rec.tests.forEach(function (a) { st.pristine.protos.set(a, clone(a.proto, seen)); });
    }
    var from = file === "" ? idx : idx + 1;
    var laterKeys = concatRecs(from, st.order.length, "jitKeys");
    var allKeys = keysBefore.concat(file === "" ? [] : st.recs.get(file).jitKeys);
    var seenKeys = new Set(allKeys);
    for (var i = 0; i < laterKeys.length; i++) {
      if (seenKeys.has(laterKeys[i])) {
        st.broken = "jitData key " + laterKeys[i] + " is set by two files";
        var e2 = new Error("not incremental: " + st.broken);
        e2.dfdNotIncremental = true;
        throw e2;
      }
      seenKeys.add(laterKeys[i]);
    }
    s.actions = s.actions.concat(concatRecs(from, st.order.length, "actions"));
    if (s.tests) s.tests = s.tests.concat(concatRecs(from, st.order.length, "tests"));
    s.graphErrors.compilationErrors = s.graphErrors.compilationErrors.concat(concatRecs(from, st.order.length, "errors"));
    st.assertionSets = st.assertionSets.concat(concatRecs(from, st.order.length, "assertionSets"));
    rebuildAssertionMap(s, st.assertionSets);
    rebuildJitFields(s, allKeys.concat(laterKeys), values);
    st.pristine = {
      actions: s.actions.slice(),
      tests: list(s.tests).slice(),
      errors: s.graphErrors.compilationErrors.slice(),
      protos: st.pristine.protos
    };
    // Drop pristine copies of actions no longer in the session.
    if (file !== "") {
      var live = new Set(st.pristine.actions.concat(st.pristine.tests));
      st.pristine.protos.forEach(function (_, a) { if (!live.has(a)) st.pristine.protos.delete(a); });
    }
    st.rerunFile = file === "" ? null : file;
    if (file !== "") {
      st.compiled.forEach(function (_, a) { if (!st.pristine.protos.has(a)) st.compiled.delete(a); });
    }
    st.inRerun = true;
    var graph;
    try {
      graph = dfdGraphStage();
    } finally {
      st.inRerun = false;
    }
    st.encoding = true;
    var out;
    try {
      out = st.encode(graph);
    } finally {
      st.encoding = false;
      forgetGraphStage();
    }
    st.broken = "";
    return out;
  }

  return {
    rerun: rerun,
    ready: function () { return st.encode !== null && !st.broken; },
    files: function () { return st.order.slice(); },
    unsafe: function (file) { return st.unsafe.get(file) || ""; },
    unsafeAll: function () {
      var o = {};
      st.unsafe.forEach(function (v, k) { o[k] = v; });
      return o;
    }
  };
});
