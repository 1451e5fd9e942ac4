"""The embedded MQTT broker (amqtt): authentication and topic ACL plugins for devices.

Built by the device-management capability; `edge/app.py` starts it beside the HTTP server.
"""
