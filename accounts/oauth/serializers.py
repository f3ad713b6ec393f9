from rest_framework import serializers


class OAuthMeSerializer(serializers.Serializer):
    """`GET /api/auth/oauth/me`: the four fields Cal.com's OAuth clients read."""

    username = serializers.CharField()
    id = serializers.IntegerField()
    email = serializers.EmailField()
    name = serializers.CharField()
