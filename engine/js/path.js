// A POSIX implementation of Node's "path" module: the one builtin that the
// official CLI lets Dataform code require. process.cwd() is "/" here.
(function () {
  "use strict";
  function assertPath(p) {
    if (typeof p !== "string") {
      throw new TypeError('The "path" argument must be of type string. Received ' + typeof p);
    }
  }
  function normalizeString(p, allowAboveRoot) {
    var res = [];
    var parts = p.split("/");
    for (var i = 0; i < parts.length; i++) {
      var s = parts[i];
      if (s === "" || s === ".") continue;
      if (s === "..") {
        if (res.length > 0 && res[res.length - 1] !== "..") res.pop();
        else if (allowAboveRoot) res.push("..");
      } else {
        res.push(s);
      }
    }
    return res.join("/");
  }
  var path = {
    sep: "/",
    delimiter: ":",
    resolve: function () {
      var resolved = "";
      var absolute = false;
      for (var i = arguments.length - 1; i >= -1 && !absolute; i--) {
        var p = i >= 0 ? arguments[i] : "/";
        assertPath(p);
        if (p.length === 0) continue;
        resolved = p + "/" + resolved;
        absolute = p.charAt(0) === "/";
      }
      resolved = normalizeString(resolved, !absolute);
      return absolute ? "/" + resolved : resolved.length > 0 ? resolved : ".";
    },
    normalize: function (p) {
      assertPath(p);
      if (p.length === 0) return ".";
      var absolute = p.charAt(0) === "/";
      var trailing = p.charAt(p.length - 1) === "/";
      var out = normalizeString(p, !absolute);
      if (out.length === 0) {
        if (absolute) return "/";
        return trailing ? "./" : ".";
      }
      if (trailing) out += "/";
      return absolute ? "/" + out : out;
    },
    isAbsolute: function (p) {
      assertPath(p);
      return p.length > 0 && p.charAt(0) === "/";
    },
    join: function () {
      if (arguments.length === 0) return ".";
      var joined;
      for (var i = 0; i < arguments.length; i++) {
        assertPath(arguments[i]);
        if (arguments[i].length > 0) joined = joined === undefined ? arguments[i] : joined + "/" + arguments[i];
      }
      return joined === undefined ? "." : path.normalize(joined);
    },
    relative: function (from, to) {
      assertPath(from);
      assertPath(to);
      if (from === to) return "";
      from = path.resolve(from);
      to = path.resolve(to);
      if (from === to) return "";
      var fromParts = from === "/" ? [] : from.slice(1).split("/");
      var toParts = to === "/" ? [] : to.slice(1).split("/");
      var i = 0;
      while (i < fromParts.length && i < toParts.length && fromParts[i] === toParts[i]) i++;
      var up = [];
      for (var j = i; j < fromParts.length; j++) up.push("..");
      return up.concat(toParts.slice(i)).join("/");
    },
    dirname: function (p) {
      assertPath(p);
      if (p.length === 0) return ".";
      var end = p.length;
      while (end > 1 && p.charAt(end - 1) === "/") end--;
      var idx = p.lastIndexOf("/", end - 1);
      if (idx === -1) return ".";
      if (idx === 0) return "/";
      var dir = p.slice(0, idx);
      while (dir.length > 1 && dir.charAt(dir.length - 1) === "/") dir = dir.slice(0, -1);
      return dir;
    },
    basename: function (p, ext) {
      assertPath(p);
      var end = p.length;
      while (end > 0 && p.charAt(end - 1) === "/") end--;
      var base = p.slice(p.lastIndexOf("/", end - 1) + 1, end);
      if (ext !== undefined && ext !== base && base.slice(-ext.length) === ext && ext.length > 0) {
        base = base.slice(0, base.length - ext.length);
      }
      return base;
    },
    extname: function (p) {
      var base = path.basename(p);
      var dot = base.lastIndexOf(".");
      if (dot <= 0 || (dot === 1 && base === "..")) return "";
      return base.slice(dot);
    },
    parse: function (p) {
      assertPath(p);
      var root = p.charAt(0) === "/" ? "/" : "";
      var base = path.basename(p);
      var ext = path.extname(p);
      var dir = p.length === 0 ? "" : path.dirname(p);
      if (dir === "." && p.charAt(0) !== ".") dir = "";
      return { root: root, dir: dir, base: base, ext: ext, name: ext ? base.slice(0, -ext.length) : base };
    },
    format: function (o) {
      var dir = o.dir || o.root;
      var base = o.base || (o.name || "") + (o.ext || "");
      if (!dir) return base;
      return dir === o.root ? dir + base : dir + "/" + base;
    },
    toNamespacedPath: function (p) {
      return p;
    }
  };
  path.posix = path;
  return path;
})()
