// Players' names as keys of the server's answers ({name: ...}). A name is whatever the players typed, so
// "__proto__" or "constructor" is a name like any: it is looked up as the object's own key, never as the
// object's prototype or one of its methods, and objects keyed by names are made with Object.fromEntries.

/** `object[name]` where `object` holds `name` as its own key, else undefined (also when there is no object). */
export function byName(object, name) {
  return object && Object.prototype.hasOwnProperty.call(object, name) ? object[name] : undefined;
}
