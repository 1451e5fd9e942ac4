// How the signed-in person stands towards one device: the one place that decides which of
// the device pages' actions the console offers (docs/devices.md, "Who may do what").
//
// Decided from the server's answers: the interface gives a device's `is_active` to its
// admins alone (the admin view: org admins, admins of its project or of a group it is in,
// its owner where owners are admins), so its presence is the server's own word that the
// caller is an admin of this device. Rights to update or delete devices without being an
// admin come from the caller's own `device_permissions` (org, home project or a group the
// device is in), as docs/devices.md's table has them. `GET /v2/devices/{id}` does not say
// which groups a device is in, so `groupsHolding` asks each group where the caller holds
// such rights whether the device is in it: one request a group, the group's device list
// filtered by the device's ID (so a device without a name costs no more than one with).
// The server still decides every call, and a refusal is shown as its message.
import * as api from "../api.js";

/** What `me` may do to `device` (a device as `GET /v2/devices/{id}` answered it), `groups`
 * the IDs of the caller's groups the device is in (`groupsHolding`). */
export function towardsDevice(me, device, groups = []) {
  const admin = "is_active" in device;
  const update = admin || holds(me, device, groups, "update");
  return Object.freeze({
    admin,
    update,  // the twin's desired state, commands, resetting the key or the certificate
    delete: admin || holds(me, device, groups, "delete"),
    suspend: admin,
    scopes: admin,  // iot_scopes: admins only
    bundle: admin,
    tunnels: admin,
  });
}

/** Whether `device_permissions` the caller holds reach this device without being its admin:
 * at the org level, in the device's home project, or in a group it is in; never a device
 * that is itself an org or project admin (only their admins change those). */
function holds(me, device, groups, action) {
  const key = `can_${action}`;
  if (device.is_org_admin || device.is_project_admin) return false;
  if (me.org.device_permissions?.[key]) return true;
  const home = device.project_id && me.projects.some((p) => p.project_id === device.project_id && p.device_permissions?.[key]);
  return Boolean(home) || me.groups.some((g) => groups.includes(g.group_id) && g.device_permissions?.[key]);
}

/** The IDs of the groups where the caller's group access holds `device_permissions` to
 * update or delete devices and `device` is a member: none asked when the caller is the
 * device's admin (`is_active` shown) or holds no such group access. */
export async function groupsHolding(me, device) {
  if ("is_active" in device) return [];
  const acting = (g) => g.device_permissions?.can_update || g.device_permissions?.can_delete;
  const ids = [...new Set(me.groups.filter(acting).map((g) => g.group_id))];
  const inside = await Promise.all(ids.map((id) => inGroup(id, device)));
  return ids.filter((_, i) => inside[i]);
}

/** Whether the group's device list (as the caller may read it) holds the device: the
 * list filtered by its ID answers it or nothing, in one request. */
async function inGroup(groupId, device) {
  try {
    const reply = await api.get("/v2/devices", { group_id: groupId, id: device.id, limit: 1 });
    return (reply.devices || []).some((d) => d.id === device.id);
  } catch {
    return false;  // a list the caller may not read: no rights through that group shown
  }
}

/** Whether `me` may create devices, and where: at the organization's level, and in which
 * projects ([{id, name}], from the caller's own project access). */
export function creatableIn(me) {
  const orgLevel = me.isOrgAdmin || Boolean(me.org.device_permissions?.can_create);
  const projects = me.projects.filter((p) => p.is_admin || p.device_permissions?.can_create)
    .map((p) => ({ id: p.project_id, name: p.project_name || p.project_id }));
  return { any: orgLevel || projects.length > 0, orgLevel, projects };
}
