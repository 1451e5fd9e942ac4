// Every page of the console, in the order of the nav. A page module registers itself with
// the router when imported (router.register); a new page is one more import here.
import "./overview.js";
import "./orgs.js";
import "./users.js";
import "./groups.js";
import "./data.js";
import "./files.js";
import "./roles.js";
import "./devices.js";
import "./claims.js";
import "./jobs.js";
import "./audit.js";
import "./pulse.js";
import "./account.js";
