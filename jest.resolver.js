// Jest's own resolver, but for the packages that export ES modules only under the `import`
// condition (kubernetes-models, @kubernetes-models/*: no `require` or `default` entry), which
// jest's CommonJS resolution would not find. SWC turns them into CommonJS (transformIgnorePatterns).
const IMPORT_ONLY = /^(kubernetes-models|@kubernetes-models\/[^/]+)(\/|$)/;

module.exports = (request, options) => options.defaultResolver(request, IMPORT_ONLY.test(request) ? { ...options, conditions: ['import', 'default', 'node'] } : options);
