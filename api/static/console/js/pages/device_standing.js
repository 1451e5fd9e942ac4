// How the signed-in person stands towards one device: the one place that decides which of
// the device pages' actions the console offers (docs/devices.md, "Who may do what").
//
// Decided from the server's answers: the interface gives a device's `is_active` to its
// admins alone (the admin view: org admins, admins of its project or of a group it is in,
// its owner where owners are admins), so its presence is the server's own word that the
// caller is an admin of this device. Rights to update or delete devices without being an
// admin come from the caller's own access (org, project or group `device_permissions`).
// The server still decides every call, and a refusal is shown as its message.

/** What `me` may do to `device` (a device as `GET /v2/devices/{id}` answered it). */
export function towardsDevice(me, device) {
  const admin = "is_active" in device;
  const update = admin || me.may("device", "update");
  return Object.freeze({
    admin,
    update,  // the twin's desired state, commands, resetting the key or the certificate
    delete: admin || me.may("device", "delete"),
    suspend: admin,
    scopes: admin,  // iot_scopes: admins only
    bundle: admin,
    tunnels: admin,
  });
}

/** Whether `me` may create devices, and where: at the organization's level, and in which
 * projects ([{id, name}], from the caller's own project access). */
export function creatableIn(me) {
  const orgLevel = me.isOrgAdmin || Boolean(me.org.device_permissions?.can_create);
  const projects = me.projects.filter((p) => p.is_admin || p.device_permissions?.can_create)
    .map((p) => ({ id: p.project_id, name: p.project_name || p.project_id }));
  return { any: orgLevel || projects.length > 0, orgLevel, projects };
}
