// The release this code is (package.json's version): in the "listening" log line and nlr_build_info, so that an
// operator can tell which release each replica runs during a rollout.
import pkg from '../package.json' with { type: 'json' };

export const VERSION: string = pkg.version;
