import { missingLibraries } from './debian';

// What `apt-cache depends --recurse` printed for rspamd on Debian 12, cut down.
const DEPENDS = `rspamd
  PreDepends: init-system-helpers
  Depends: adduser
  Depends: libjs-bootstrap4
  Depends: <perl:any>
    perl
  Depends: libc6
  Depends: libhyperscan5
 |Depends: libluajit-5.1-2
  Depends: libluajit2-5.1-2
  Depends: libsodium23
init-system-helpers
 |Depends: usrmerge
  Depends: usr-is-merged
adduser
  Depends: libdebian-installer4
libjs-bootstrap4
  Depends: libjs-popper.js
libhyperscan5
  Depends: libc6
libluajit-5.1-2
  Depends: libluajit-5.1-common
libluajit2-5.1-2
  Depends: libluajit2-5.1-common
libluajit-5.1-common
`;

describe('missingLibraries', () => {
  it('follows the libraries the package needs, first alternatives only, and skips what is installed', () => {
    const installed = new Set(['libc6', 'libsodium23']);
    expect(missingLibraries('rspamd', DEPENDS, (p) => installed.has(p))).toEqual(['libhyperscan5', 'libluajit-5.1-2', 'libluajit-5.1-common']);
  });

  it('needs nothing when every library is there', () => {
    expect(missingLibraries('rspamd', DEPENDS, () => true)).toEqual([]);
  });
});
